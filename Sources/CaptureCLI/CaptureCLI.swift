// CaptureCLI: placeholder until its issue lands.
