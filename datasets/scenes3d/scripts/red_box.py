# A bevelled red box, lit by a sun, seen by a 50 mm camera; rendered with Cycles.
import bpy

bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))
box = bpy.context.active_object
box.name = "Box"
box.scale = (1.5, 1.0, 0.5)
box.modifiers.new("Bevel", "BEVEL").width = 0.05

red = bpy.data.materials.new("Red")
red.use_nodes = True
bsdf = red.node_tree.nodes["Principled BSDF"]
bsdf.inputs["Base Color"].default_value = (0.8, 0.05, 0.05, 1.0)
bsdf.inputs["Roughness"].default_value = 0.4
box.data.materials.append(red)

sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
sun.data.energy = 3.0
sun.rotation_euler = (0.6, 0.2, 0.8)
bpy.context.scene.collection.objects.link(sun)

camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
camera.location = (6, -6, 4)
camera.data.lens = 50
bpy.context.scene.collection.objects.link(camera)
aim = camera.constraints.new("TRACK_TO")
aim.target = box
bpy.context.view_layer.update()
camera.matrix_world = camera.matrix_world.copy()  # keep the aimed pose
camera.constraints.remove(aim)
bpy.context.scene.camera = camera

scene = bpy.context.scene
scene.render.engine = "CYCLES"
scene.render.resolution_x, scene.render.resolution_y = 320, 240
