# Step 4 of 4: camera and render settings.
import bpy
from mathutils import Vector

camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
camera.location = (7, -7, 5)
camera.data.lens = 40
camera.rotation_euler = (Vector((0, 0, 0.5)) - camera.location).to_track_quat("-Z", "Y").to_euler()
bpy.context.scene.collection.objects.link(camera)
scene = bpy.context.scene
scene.camera = camera
scene.render.engine = "CYCLES"
scene.render.resolution_x, scene.render.resolution_y = 400, 300
