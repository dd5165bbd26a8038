// channel_io
