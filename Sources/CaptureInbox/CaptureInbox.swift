// CaptureInbox: placeholder until its issue lands.
