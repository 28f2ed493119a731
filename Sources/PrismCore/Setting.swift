import Synchronization

/// A setting of a run that the library's messages name ("\(Setting.inputColor): 'x' names no field").
/// The library names a setting by this value, never by how one front end spells it: the command line
/// spells it as a flag (`--input-color`), the C library as its option name (`autorotate=0`), a Swift
/// caller as the `Session.Options` property (`inputColor`). The front end chooses the spelling once,
/// when it starts (`Setting.spell(_:)`); a message made after that interpolates the setting in it.
public struct Setting: Hashable, Sendable, CustomStringConvertible {
    /// How a Swift caller sets it: the property of `Session.Options` (or of the output, for `format`),
    /// with the value where the setting is one value of it (`autorotate = false`). The spelling of any
    /// setting the front end did not spell.
    public let property: String

    private init(_ property: String) { self.property = property }

    // Input.
    public static let size = Setting("size")
    public static let noAutorotate = Setting("autorotate = false")
    public static let inputColor = Setting("inputColor")
    public static let strictDecode = Setting("strictDecoding")
    public static let inputTimeout = Setting("network.timeout")
    public static let reconnectFor = Setting("network.reconnect.seconds")
    public static let noReconnect = Setting("network.reconnect.enabled = false")
    public static let realtime = Setting("pacedToClock")
    // Sound.
    public static let audio = Setting("audioDevice")
    public static let audioFrom = Setting("audioInput")
    // Colour.
    public static let dynamicRange = Setting("dynamicRange")
    public static let toneMap = Setting("toneCurve")
    public static let outputTransfer = Setting("outputTransfer")
    // Output.
    public static let codec = Setting("encoder.codec")
    public static let format = Setting("format")
    public static let minFree = Setting("limits.minFreeBytes")
    public static let output = Setting("outputs")
    // Faces and segmentation.
    public static let faceMinSize = Setting("faces.minSize")
    public static let facesStrict = Setting("faces.strict")
    public static let requireFaces = Setting("faces.requireFaces")
    public static let facesIn = Setting("faces.sidecarIn")
    public static let facesOut = Setting("faces.sidecarOut")
    public static let segmentModel = Setting("segmentation.model")
    /// Every segmentation setting at once ("the \(Setting.segmentAny) options need a model").
    public static let segmentAny = Setting("segmentation.*")
    public static let segmentSmoothing = Setting("segmentation.smoothing")

    /// Every setting, for a front end to check that it spells each one.
    public static let all: [Setting] = [
        size, noAutorotate, inputColor, strictDecode, inputTimeout, reconnectFor, noReconnect, realtime, audio, audioFrom,
        dynamicRange, toneMap, outputTransfer, codec, format, minFree, output, faceMinSize, facesStrict, requireFaces, facesIn,
        facesOut, segmentModel, segmentAny, segmentSmoothing,
    ]

    /// The setting as the front end spells it.
    public var description: String { Self.spellings.withLock { $0[self] } ?? property }

    /// Spells settings in messages made from now on: as `names` says for those it names, as their
    /// `property` for the rest. Process-wide: a front end calls it once, when it starts.
    public static func spell(_ names: [Setting: String]) { spellings.withLock { $0 = names } }

    private static let spellings = Mutex<[Setting: String]>([:])
}
