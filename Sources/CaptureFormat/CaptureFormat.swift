// CaptureFormat: placeholder until its issue lands.
