// placeholder until the cli layer lands
