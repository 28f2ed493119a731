import CEGL
import CGBM
import CGLES
import CGPUShims
import Foundation
import PrismCore
import Synchronization

/// How an EGL display was reached, in the order Prism tries them.
public enum EGLPlatform: String, Sendable, CaseIterable {
    /// EGL_EXT_platform_device: a device enumerated by eglQueryDevicesEXT (NVIDIA's headless path, Mesa's too).
    case device
    /// EGL_KHR_platform_gbm on a DRM render node.
    case gbm
    /// EGL_MESA_platform_surfaceless: Mesa without any device (llvmpipe).
    case surfaceless
}

/// What the caller asks of the GPU.
public struct GPUOptions: Sendable {
    /// Index into the EGL devices (`prism devices`); nil picks the first that works.
    public var deviceIndex: Int?
    /// A DRM render node for the GBM platform, e.g. /dev/dri/renderD128.
    public var renderNode: String?
    /// Force one platform instead of trying them in order.
    public var platform: EGLPlatform?
    /// The newest GLES 3 minor version to ask for and use (0...2); nil: `PRISM_GLES_MINOR` from the
    /// environment, else 2. A test-and-debug knob: 0 makes the context a GLES 3.0 one, without compute
    /// shaders (`GPULimits.supportsCompute`), as an older driver would give, even where the driver
    /// hands out 3.2 anyway.
    public var maxGLESMinorVersion: Int?

    /// The environment variable `maxGLESMinorVersion` falls back to.
    public static let glesMinorVariable = "PRISM_GLES_MINOR"

    /// Options; every nil leaves the choice to `GPUContext`, which tries the platforms in order.
    public init(deviceIndex: Int? = nil, renderNode: String? = nil, platform: EGLPlatform? = nil,
                maxGLESMinorVersion: Int? = nil) {
        self.deviceIndex = deviceIndex
        self.renderNode = renderNode
        self.platform = platform
        self.maxGLESMinorVersion = maxGLESMinorVersion
    }

    /// The GLES 3 minor version cap in force: `maxGLESMinorVersion`, else `PRISM_GLES_MINOR`, else 2.
    /// A value outside 0...2 is an error, not silently the default (a knob that seems to work but does not
    /// hides what was being tested).
    public func glesMinorVersionCap(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int {
        if let asked = maxGLESMinorVersion {
            guard (0...2).contains(asked) else {
                throw InvalidRequest("maxGLESMinorVersion takes 0, 1 or 2 (GLES 3.0, 3.1, 3.2), not \(asked)")
            }
            return asked
        }
        guard let text = environment[Self.glesMinorVariable]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            return 2
        }
        guard let value = Int(text), (0...2).contains(value) else {
            throw InvalidRequest("\(Self.glesMinorVariable) takes 0, 1 or 2 (GLES 3.0, 3.1, 3.2), not '\(text)'")
        }
        return value
    }
}

/// What the context runs on, as the driver reports it.
public struct GPUInfo: Sendable, CustomStringConvertible {
    /// The EGL platform the display was opened on.
    public var platform: EGLPlatform
    /// The EGL device or node that was opened ("device 0: /dev/dri/renderD128", "surfaceless").
    public var source: String
    /// EGL_VENDOR of the display ("" if the driver gives none).
    public var eglVendor: String
    /// EGL_VERSION of the display, e.g. "1.5".
    public var eglVersion: String
    /// GL_VENDOR of the context.
    public var vendor: String
    /// GL_RENDERER of the context: the GPU or rasteriser name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    public var renderer: String
    /// GL_VERSION of the context, e.g. "OpenGL ES 3.2 …".
    public var version: String
    /// GL_SHADING_LANGUAGE_VERSION of the context.
    public var shadingLanguageVersion: String
    /// The context's GL extension names (GL_EXTENSIONS, one entry per extension).
    public var extensions: Set<String>
    /// A CPU rasteriser (llvmpipe, softpipe, SwiftShader): allowed, but announced.
    public var isSoftware: Bool

    public var description: String {
        "\(renderer) (\(version); \(platform.rawValue) platform, \(source))" + (isSoftware ? " [software renderer]" : "")
    }

    /// Whether a GL_RENDERER string names a CPU rasteriser (Mesa's llvmpipe, softpipe, swrast; SwiftShader).
    public static func isSoftwareRenderer(_ renderer: String) -> Bool {
        let lowered = renderer.lowercased()
        return ["llvmpipe", "softpipe", "swrast", "swiftshader", "software"].contains { lowered.contains($0) }
    }
}

/// One EGL device as listed by `prism devices`.
public struct GPUDeviceListing: Sendable {
    /// The device's index, as `GPUOptions.deviceIndex` takes it.
    public var index: Int
    /// The device's EGL extension string, space-separated as EGL returns it.
    public var extensions: String
    /// The device's DRM device file (EGL_DRM_DEVICE_FILE_EXT), when the driver says.
    public var drmDevice: String?
    /// The device's DRM render node (EGL_DRM_RENDER_NODE_FILE_EXT), when the driver says.
    public var renderNode: String?
    /// True for a software device (EGL_MESA_device_software).
    public var isSoftware: Bool
    /// The GL strings when a context could be made on it, or why not.
    public var info: Result<GPUInfo, GPUContextError>
}

/// Why no GL context could be made, with what each platform said.
public struct GPUContextError: PrismError {
    /// One "platform: reason" line per platform tried, in order.
    public let attempts: [String]
    /// The failure with what each platform said.
    public init(attempts: [String]) { self.attempts = attempts }
    public var description: String { "no usable GPU context: " + attempts.joined(separator: "; ") }
}

/// An EGL display plus a GLES 3 context, current on its own GPU thread for its whole life.
///
/// All GL work goes through `perform`, which runs on that thread. Nothing about GL is global: two
/// contexts (two GPUs, or a test beside a pipeline) are independent. GL objects made in `perform`
/// belong to this context's thread and check it (see `GPUThread`, `GPUBound`).
public final class GPUContext: Sendable {
    /// What the context runs on, read once when it was made.
    public let info: GPUInfo
    /// The thread the context is current on; every GL call of this context runs there.
    package let thread: GPUThread
    /// The EGL handles until `close`; only touched on the GPU thread.
    private let handles: Mutex<OpenedContext?>

    /// Creates a context, trying EGL device → GBM render node → Mesa surfaceless unless `options` pins one.
    public init(options: GPUOptions = GPUOptions()) throws {
        let minorCap = try options.glesMinorVersionCap()
        let thread = GPUThread(name: "prism.gpu")
        var failures: [String] = []
        /// Tries the platforms in order; an explicit choice is not silently replaced by another platform.
        func openFirst() throws -> OpenedContext? {
            for platform in GPUContext.platformOrder(options) {
                do {
                    let opened = try GPUContext.open(platform: platform, options: options, maxMinorVersion: minorCap)
                    thread.limits = GPULimits.read(maxMinorVersion: minorCap)
                    return opened
                } catch let error as PrismError {
                    failures.append("\(platform.rawValue): \(error.description)")
                    if options.platform != nil || (platform == .device && options.deviceIndex != nil)
                        || (platform == .gbm && options.renderNode != nil) {
                        throw GPUContextError(attempts: failures)
                    }
                }
            }
            return nil
        }
        let attempt: OpenedContext?
        do {
            attempt = try thread.sync(openFirst)
        } catch {
            thread.stop()  // no context: the thread has nothing left to do
            throw error
        }
        guard let opened = attempt else {
            thread.stop()
            throw GPUContextError(attempts: failures)
        }
        self.thread = thread
        self.info = opened.info
        self.handles = Mutex(opened)
    }

    deinit { close() }

    /// Releases the context and stops the GPU thread. GL objects still alive are destroyed with the
    /// context (their own deletions, if they come later, are dropped).
    public func close() {
        handles.withLock { handles in
            guard let opened = handles.take() else { return }
            thread.sync {
                // The context's caches go first, while it is current: their deletions balance the counts.
                thread.releaseResources()
                opened.destroy(releasingThread: true)
            }
        }
        thread.stop()
    }

    /// Runs `body` on the GPU thread with the context current.
    public func perform<T>(_ body: () throws -> T) throws -> T {
        try thread.sync(body)
    }

    /// GL objects alive in this context, by kind (a leak check for tests and long runs).
    package var liveObjects: GPUObjectCounts { thread.liveObjects }

    /// GL objects made in this context so far, by kind (deleted ones included).
    package var madeObjects: GPUObjectCounts { thread.madeObjects }

    /// Programs linked on this context so far (see `ProgramCache`).
    public var programLinks: Int { thread.programLinks }

    /// The context's program cache and target pool; on its GPU thread only (inside `perform`).
    package var resources: GPUResources { thread.resources }

    /// Drops the cached programs and free render targets (inside `perform`): what a test does before it
    /// checks that every other GL object is gone.
    public func releaseResources() { thread.releaseResources() }

    /// Waits until the GPU has finished every command submitted so far (glFinish): what a benchmark
    /// does around a measured stretch. Call it on the context's thread (inside `perform`).
    public func finish() {
        thread.checkCurrent("GPUContext.finish()")
        glFinish()
    }

    /// The GL_RENDERER string of the context current on the calling thread ("" off a GPU thread).
    /// For code that runs inside `perform` without the `GPUContext` at hand (a kernel's `prepare`).
    public static func currentRenderer() -> String {
        guard GPUThread.current != nil else { return "" }
        return glGetString(GLenum(GL_RENDERER)).map { String(cString: $0) } ?? ""
    }

    // MARK: Listing

    /// Every EGL device, each with the GL strings of a context made on it (or why none could be made),
    /// then the surfaceless platform. What `prism devices` prints.
    public static func listDevices() -> (devices: [GPUDeviceListing], surfaceless: Result<GPUInfo, GPUContextError>) {
        let thread = GPUThread(name: "prism.gpu-list")
        defer { thread.stop() }
        return thread.sync {
            var listings: [GPUDeviceListing] = []
            for (index, device) in enumerateDevices().enumerated() {
                let extensions = deviceString(device, EGL_EXTENSIONS) ?? ""
                var listing = GPUDeviceListing(
                    index: index, extensions: extensions,
                    drmDevice: deviceString(device, 0x3233),  // EGL_DRM_DEVICE_FILE_EXT
                    renderNode: deviceString(device, 0x3377),  // EGL_DRM_RENDER_NODE_FILE_EXT
                    isSoftware: extensions.contains("EGL_MESA_device_software"),
                    info: .failure(GPUContextError(attempts: ["not tried"])))
                do {
                    let opened = try open(platform: .device, options: GPUOptions(deviceIndex: index))
                    listing.info = .success(opened.info)
                    opened.destroy()
                } catch let error as PrismError {
                    listing.info = .failure(GPUContextError(attempts: [error.description]))
                } catch {
                    listing.info = .failure(GPUContextError(attempts: ["\(error)"]))
                }
                listings.append(listing)
            }
            let surfaceless: Result<GPUInfo, GPUContextError>
            do {
                let opened = try open(platform: .surfaceless, options: GPUOptions())
                surfaceless = .success(opened.info)
                opened.destroy()
            } catch let error as PrismError {
                surfaceless = .failure(GPUContextError(attempts: [error.description]))
            } catch {
                surfaceless = .failure(GPUContextError(attempts: ["\(error)"]))
            }
            return (listings, surfaceless)
        }
    }

    // MARK: Opening (runs on the GPU thread)

    private struct OpenedContext {
        var display: EGLDisplay
        var context: EGLContext
        var gbmDevice: OpaquePointer?
        var gbmFD: Int32
        var info: GPUInfo

        func destroy(releasingThread: Bool = false) {
            eglMakeCurrent(display, prism_egl_no_surface(), prism_egl_no_surface(), prism_egl_no_context())
            eglDestroyContext(display, context)
            eglTerminate(display)
            if releasingThread { eglReleaseThread() }
            if let gbmDevice { gbm_device_destroy(gbmDevice) }
            if gbmFD >= 0 { Foundation.close(gbmFD) }
        }
    }

    private static func platformOrder(_ options: GPUOptions) -> [EGLPlatform] {
        if let forced = options.platform { return [forced] }
        if options.renderNode != nil { return [.gbm] }
        if options.deviceIndex != nil { return [.device] }
        return [.device, .gbm, .surfaceless]
    }

    private static var clientExtensions: String {
        eglQueryString(prism_egl_no_display(), EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
    }

    private static func enumerateDevices() -> [EGLDeviceEXT] {
        var count: EGLint = 0
        guard prism_egl_query_devices(0, nil, &count) != 0, count > 0 else { return [] }
        var devices = [EGLDeviceEXT?](repeating: nil, count: Int(count))
        guard prism_egl_query_devices(count, &devices, &count) != 0 else { return [] }
        return devices.prefix(Int(count)).compactMap { $0 }
    }

    private static func deviceString(_ device: EGLDeviceEXT, _ name: Int32) -> String? {
        prism_egl_query_device_string(device, EGLint(name)).map { String(cString: $0) }
    }

    private static func open(platform: EGLPlatform, options: GPUOptions, maxMinorVersion: Int = 2) throws -> OpenedContext {
        let client = clientExtensions
        var gbmDevice: OpaquePointer?
        var gbmFD: Int32 = -1
        let display: EGLDisplay?
        let source: String
        switch platform {
        case .device:
            guard client.contains("EGL_EXT_platform_device") else {
                throw EGLError("eglGetPlatformDisplay", code: 0, detail: "EGL_EXT_platform_device is not supported")
            }
            let devices = enumerateDevices()
            guard !devices.isEmpty else {
                throw EGLError("eglQueryDevicesEXT", code: 0, detail: "no EGL devices")
            }
            let index = options.deviceIndex ?? 0
            guard devices.indices.contains(index) else {
                throw EGLError("eglQueryDevicesEXT", code: 0,
                               detail: "there is no GPU \(index) (\(devices.count) EGL device(s): 0...\(devices.count - 1))")
            }
            let device = devices[index]
            let node = deviceString(device, 0x3377) ?? deviceString(device, 0x3233)
            let software = (deviceString(device, EGL_EXTENSIONS) ?? "").contains("EGL_MESA_device_software")
            source = "device \(index)" + (node.map { ": \($0)" } ?? (software ? ": software" : ""))
            display = prism_egl_get_platform_display(EGLenum(EGL_PLATFORM_DEVICE_EXT), device, nil)
        case .gbm:
            guard client.contains("EGL_KHR_platform_gbm") || client.contains("EGL_MESA_platform_gbm") else {
                throw EGLError("eglGetPlatformDisplay", code: 0, detail: "EGL_KHR_platform_gbm is not supported")
            }
            let node = options.renderNode ?? firstRenderNode()
            guard let node else {
                throw EGLError("gbm_create_device", code: 0, detail: "no DRM render node in /dev/dri")
            }
            gbmFD = Foundation.open(node, O_RDWR | O_CLOEXEC)
            guard gbmFD >= 0 else { throw SystemError("open", code: errno, context: node) }
            gbmDevice = gbm_create_device(gbmFD)
            guard let gbmDevice else {
                Foundation.close(gbmFD)
                throw EGLError("gbm_create_device", code: 0, detail: node)
            }
            source = node
            display = prism_egl_get_platform_display(EGLenum(EGL_PLATFORM_GBM_KHR), UnsafeMutableRawPointer(gbmDevice), nil)
        case .surfaceless:
            guard client.contains("EGL_MESA_platform_surfaceless") else {
                throw EGLError("eglGetPlatformDisplay", code: 0, detail: "EGL_MESA_platform_surfaceless is not supported")
            }
            source = "surfaceless"
            display = prism_egl_get_platform_display(EGLenum(EGL_PLATFORM_SURFACELESS_MESA), nil, nil)
        }
        func cleanupGBM() {
            if let gbmDevice { gbm_device_destroy(gbmDevice) }
            if gbmFD >= 0 { Foundation.close(gbmFD) }
        }
        guard let display, display != prism_egl_no_display() else {
            cleanupGBM()
            throw EGLError("eglGetPlatformDisplay")
        }
        var major: EGLint = 0, minor: EGLint = 0
        guard eglInitialize(display, &major, &minor) == EGL_TRUE else {
            let error = EGLError("eglInitialize")
            cleanupGBM()
            throw error
        }
        do {
            let context = try createContext(display, maxMinorVersion: maxMinorVersion)
            var info = try readInfo(platform: platform, source: source, display: display)
            info.isSoftware = info.isSoftware || source.hasSuffix("software")
            return OpenedContext(display: display, context: context, gbmDevice: gbmDevice, gbmFD: gbmFD, info: info)
        } catch {
            eglTerminate(display)
            cleanupGBM()
            throw error
        }
    }

    private static func firstRenderNode() -> String? {
        let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return nodes.filter { $0.hasPrefix("renderD") }.sorted().first.map { "/dev/dri/" + $0 }
    }

    private static func createContext(_ display: EGLDisplay, maxMinorVersion: Int) throws -> EGLContext {
        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGL_TRUE else { throw EGLError("eglBindAPI") }
        let displayExtensions = eglQueryString(display, EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
        guard displayExtensions.contains("EGL_KHR_surfaceless_context") else {
            throw EGLError("eglMakeCurrent", code: 0, detail: "EGL_KHR_surfaceless_context is not supported")
        }
        // No surface is ever drawn: with EGL_KHR_no_config_context there is no need to pick a config.
        var config: EGLConfig?
        if !displayExtensions.contains("EGL_KHR_no_config_context") {
            let attributes: [EGLint] = [EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_NONE]
            var count: EGLint = 0
            guard eglChooseConfig(display, attributes, &config, 1, &count) == EGL_TRUE, count > 0 else {
                throw EGLError("eglChooseConfig", detail: "no GLES 3 config")
            }
        }
        // Ask for the newest GLES 3.x first (3.2 brings float render targets and more), then settle;
        // never above the cap (`GPUOptions.maxGLESMinorVersion`).
        for minor in ([2, 1, 0] as [EGLint]).filter({ $0 <= maxMinorVersion }) {
            let attributes: [EGLint] = [EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, minor, EGL_NONE]
            if let context = eglCreateContext(display, config, prism_egl_no_context(), attributes),
               context != prism_egl_no_context() {
                guard eglMakeCurrent(display, prism_egl_no_surface(), prism_egl_no_surface(), context) == EGL_TRUE else {
                    let error = EGLError("eglMakeCurrent")
                    eglDestroyContext(display, context)
                    throw error
                }
                return context
            }
        }
        throw EGLError("eglCreateContext", detail: "no OpenGL ES 3 context")
    }

    private static func readInfo(platform: EGLPlatform, source: String, display: EGLDisplay) throws -> GPUInfo {
        func glString(_ name: Int32) -> String {
            glGetString(GLenum(name)).map { String(cString: $0) } ?? ""
        }
        var extensions = Set<String>()
        var count: GLint = 0
        glGetIntegerv(GLenum(GL_NUM_EXTENSIONS), &count)
        for index in 0..<max(count, 0) {
            if let name = glGetStringi(GLenum(GL_EXTENSIONS), GLuint(index)) {
                extensions.insert(String(cString: name))
            }
        }
        let renderer = glString(GL_RENDERER)
        let software = GPUInfo.isSoftwareRenderer(renderer)
        return GPUInfo(
            platform: platform, source: source,
            eglVendor: eglQueryString(display, EGL_VENDOR).map { String(cString: $0) } ?? "",
            eglVersion: eglQueryString(display, EGL_VERSION).map { String(cString: $0) } ?? "",
            vendor: glString(GL_VENDOR), renderer: renderer, version: glString(GL_VERSION),
            shadingLanguageVersion: glString(GL_SHADING_LANGUAGE_VERSION),
            extensions: extensions, isSoftware: software)
    }
}
