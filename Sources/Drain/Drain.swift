// Drain: placeholder until its issue lands.
