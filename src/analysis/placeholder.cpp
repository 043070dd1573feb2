// placeholder until the analysis layer lands
