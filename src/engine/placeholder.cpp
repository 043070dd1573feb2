// placeholder until the engine layer lands
