// placeholder until the io layer lands
