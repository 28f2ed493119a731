/// `InvalidRequest` under the name library code used for it; removed once no library code uses it.
public typealias UsageError = InvalidRequest
