# A 2 x 1 x 0.5 m block built in Blender; the verifier exports the scene's meshes.
import bpy

bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 0.25))
bpy.context.active_object.scale = (2, 1, 0.5)
