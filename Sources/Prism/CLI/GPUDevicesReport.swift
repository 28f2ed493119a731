import PrismGPU

/// The text `prism devices` prints: every EGL device with its GL strings, then the surfaceless platform.
enum GPUDevicesReport {
    static func make() -> String {
        let (devices, surfaceless) = GPUContext.listDevices()
        var lines: [String] = []
        if devices.isEmpty { lines.append("no EGL devices (EGL_EXT_device_enumeration missing or empty)") }
        for device in devices {
            var head = "--gpu \(device.index):"
            if let node = device.renderNode ?? device.drmDevice { head += " \(node)" }
            if device.isSoftware { head += " (software)" }
            lines.append(head)
            switch device.info {
            case .success(let info):
                lines.append("    renderer: \(info.renderer)\(info.isSoftware ? " [software renderer]" : "")")
                lines.append("    version:  \(info.version); GLSL \(info.shadingLanguageVersion)")
                lines.append("    vendor:   \(info.vendor); EGL \(info.eglVersion) (\(info.eglVendor))")
            case .failure(let error):
                lines.append("    unusable: \(error.description)")
            }
        }
        switch surfaceless {
        case .success(let info):
            lines.append("surfaceless (Mesa): \(info.renderer)\(info.isSoftware ? " [software renderer]" : ""); \(info.version)")
        case .failure(let error):
            lines.append("surfaceless (Mesa): unavailable: \(error.description)")
        }
        return lines.joined(separator: "\n")
    }
}
