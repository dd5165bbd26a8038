// message_codec
