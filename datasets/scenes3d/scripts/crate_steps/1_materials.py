# Step 2 of 4: materials. Wood for the crate, concrete for the floor.
import bpy

for obj_name, mat_name, colour, roughness in [
    ("Crate", "Wood", (0.45, 0.3, 0.15, 1.0), 0.7),
    ("Floor", "Concrete", (0.5, 0.5, 0.5, 1.0), 0.9),
]:
    mat = bpy.data.materials.new(mat_name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = colour
    bsdf.inputs["Roughness"].default_value = roughness
    bpy.data.objects[obj_name].data.materials.append(mat)
