# Step 1 of 4: geometry. A 10 m floor and a 1 m crate standing on it.
import bpy

bpy.ops.mesh.primitive_plane_add(size=10)
bpy.context.active_object.name = "Floor"
bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 0.5))
bpy.context.active_object.name = "Crate"
