// BatchIO: placeholder until its issue lands.
