// Workspace: placeholder until its issue lands.
