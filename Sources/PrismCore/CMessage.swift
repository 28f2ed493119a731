extension String {
    /// The text a C API wrote into a buffer (`char *error, size_t size`): up to the first NUL, as UTF-8.
    package init(cMessage buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
