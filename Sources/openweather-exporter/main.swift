print("scaffolding")
