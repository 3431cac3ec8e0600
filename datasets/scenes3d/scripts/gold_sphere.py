# A polished gold sphere under a warm point light and a soft area light.
import bpy

bpy.ops.mesh.primitive_uv_sphere_add(radius=1.0, location=(0, 0, 1), segments=48, ring_count=24)
ball = bpy.context.active_object
ball.name = "Ball"
ball.modifiers.new("Smooth", "SUBSURF").levels = 1

gold = bpy.data.materials.new("Gold")
gold.use_nodes = True
bsdf = gold.node_tree.nodes["Principled BSDF"]
bsdf.inputs["Base Color"].default_value = (1.0, 0.77, 0.34, 1.0)
bsdf.inputs["Metallic"].default_value = 1.0
bsdf.inputs["Roughness"].default_value = 0.2
ball.data.materials.append(gold)

for name, kind, energy, colour, location in [
    ("Key", "POINT", 500.0, (1.0, 0.8, 0.6), (3, -3, 4)),
    ("Soft", "AREA", 200.0, (1.0, 1.0, 1.0), (-4, -2, 5)),
]:
    light = bpy.data.lights.new(name, kind)
    light.energy, light.color = energy, colour
    obj = bpy.data.objects.new(name, light)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)

camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
camera.location = (0, -8, 3)
camera.data.lens = 35
direction = camera.location.copy()
direction.z -= 1  # look at (0, 0, 1)
camera.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
bpy.context.scene.collection.objects.link(camera)
bpy.context.scene.camera = camera
