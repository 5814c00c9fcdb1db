class MediamockError(Exception):
    """The helper cannot find, start or reach the server. ``code`` says which:
    unsupported_platform, binary_missing, port_busy, exited_at_start,
    start_timeout or control_error."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
