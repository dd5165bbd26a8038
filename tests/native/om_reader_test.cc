// om_reader
