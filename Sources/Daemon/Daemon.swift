// Daemon: placeholder until its issue lands.
