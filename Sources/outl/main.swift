print("outl: not built yet")
