# An L-bracket: a 40 x 20 x 4 mm base and a 4 x 20 x 30 mm upright, as one solid.
import trimesh

base = trimesh.creation.box(bounds=[[0, 0, 0], [40, 20, 4]])
upright = trimesh.creation.box(bounds=[[0, 0, 0], [4, 20, 30]])
trimesh.boolean.union([base, upright], engine="manifold").export("out.stl")
