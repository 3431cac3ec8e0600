# A 60 x 40 x 5 mm plate with a 10 mm hole through its centre.
import trimesh

plate = trimesh.creation.box(bounds=[[0, 0, 0], [60, 40, 5]])
hole = trimesh.creation.cylinder(radius=5, height=20, sections=48)
hole.apply_translation([30, 20, 2.5])
trimesh.boolean.difference([plate, hole], engine="manifold").export("out.stl")
