import PrismCore

/// How `prism` spells the settings the library's messages name: as the flags that set them.
enum SettingFlags {
    static let names: [Setting: String] = [
        .size: "--size", .noAutorotate: "--no-autorotate", .inputColor: "--input-color", .strictDecode: "--strict-decode",
        .inputTimeout: "--input-timeout", .reconnectFor: "--reconnect-for", .noReconnect: "--no-reconnect",
        .realtime: "--realtime", .audio: "--audio", .audioFrom: "--audio-from", .dynamicRange: "--dynamic-range",
        .toneMap: "--tonemap", .outputTransfer: "--output-transfer", .codec: "--codec", .format: "--format",
        .minFree: "--min-free", .output: "-o", .faceMinSize: "--face-min-size", .facesStrict: "--faces-strict",
        .requireFaces: "--require-faces", .facesIn: "--faces-in", .facesOut: "--faces-out",
        .segmentModel: "--segment-model", .segmentAny: "--segment-*", .segmentSmoothing: "--segment-smoothing",
    ]
}
