# Step 3 of 4: lighting. An area key light and a point fill light.
import bpy

LIGHTS = [("Key", "AREA", 300.0, (3, -3, 5)), ("Fill", "POINT", 100.0, (-4, -1, 3))]
for name, kind, energy, location in LIGHTS:
    obj = bpy.data.objects.new(name, bpy.data.lights.new(name, kind))
    obj.data.energy = energy
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
