print("outld: not built yet")
