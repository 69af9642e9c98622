print("outl-capture: not built yet")
