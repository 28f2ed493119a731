import Foundation
import PrismCore
import Synchronization

/// A problem in a faces sidecar, at a line of the file (`faces.jsonl:3: …`).
public struct FaceSidecarError: PrismError {
    /// The whole one-line description, place first when there is one.
    public let message: String
    /// An error about the sidecar as a whole.
    public init(_ message: String) { self.message = message }
    /// An error at 1-based `line` of the sidecar at `path`, written `path:line: message`.
    public init(path: String, line: Int, _ message: String) { self.message = "\(path):\(line): \(message)" }
    public var description: String { message }
}

/// The sidecar format, JSON Lines, one line per frame:
/// `{"frame":0,"pts":"1001/30000","size":[1280,720],"faces":[{"id":1,"box":[x,y,w,h],"score":12}]}`
/// — pts as a rational in seconds, the frame's size, each face's id, box (frame pixels, origin top
/// left) and score. Lines are written with fixed key order and two decimals, so the same faces give the
/// same bytes.
package enum FaceSidecar {
    package static func line(for frame: FaceFrame) -> String {
        let faces = frame.faces.map { face in
            let b = face.box
            return String(format: "{\"id\":%d,\"box\":[%.2f,%.2f,%.2f,%.2f],\"score\":%.2f}",
                          face.id, b.x, b.y, b.width, b.height, face.score)
        }
        return "{\"frame\":\(frame.frameIndex),\"pts\":\"\(frame.pts.value)/\(frame.pts.timescale)\","
            + "\"size\":[\(frame.frameSize.width),\(frame.frameSize.height)],\"faces\":[\(faces.joined(separator: ","))]}"
    }

    /// One parsed line: its pts, the frame size it was written at (if given) and its faces.
    package struct Entry: Sendable, Equatable {
        package var line: Int
        package var pts: MediaTime
        package var frameSize: Size?
        package var faces: [TrackedFace]
    }

    /// Reads and checks a whole sidecar. Every problem names the file and line.
    package static func read(path: String) throws -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read it" : "no such file"
            throw FaceSidecarError("\(path): \(reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw FaceSidecarError("\(path): not UTF-8 text") }
        var entries: [Entry] = []
        var seen: [MediaTime: Int] = [:]
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = offset + 1
            let content = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if content.isEmpty { continue }
            func fail(_ message: String) -> FaceSidecarError { FaceSidecarError(path: path, line: lineNumber, message) }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(content.utf8))) as? [String: Any] else {
                throw fail("not a JSON object")
            }
            guard let ptsText = object["pts"] as? String, let pts = parseTime(ptsText) else {
                throw fail("\"pts\" must be a time like \"1001/30000\" (seconds as a fraction)")
            }
            if let earlier = seen[pts] { throw fail("pts \(ptsText) already given on line \(earlier)") }
            seen[pts] = lineNumber
            var frameSize: Size?
            if let size = object["size"] {
                guard let pair = size as? [Any], pair.count == 2, let w = integer(pair[0]), let h = integer(pair[1]), w > 0, h > 0 else {
                    throw fail("\"size\" must be [width, height] in pixels")
                }
                frameSize = Size(width: w, height: h)
            }
            guard let list = object["faces"] as? [Any] else { throw fail("\"faces\" must be a list (empty for none)") }
            var faces: [TrackedFace] = []
            for (index, item) in list.enumerated() {
                guard let face = item as? [String: Any] else { throw fail("face \(index + 1) is not an object") }
                guard let id = face["id"].flatMap(integer) else { throw fail("face \(index + 1): \"id\" must be a whole number") }
                guard let box = face["box"] as? [Any], box.count == 4, let values = Optional(box.compactMap(number)),
                      values.count == 4, values[2] > 0, values[3] > 0 else {
                    throw fail("face \(index + 1): \"box\" must be [x, y, width, height] with a positive width and height")
                }
                var score = 0.0
                if let given = face["score"] {
                    guard let value = number(given) else { throw fail("face \(index + 1): \"score\" must be a number") }
                    score = value
                }
                faces.append(TrackedFace(id: id, box: FaceBox(x: values[0], y: values[1], width: values[2], height: values[3]),
                                         score: score))
            }
            entries.append(Entry(line: lineNumber, pts: pts, frameSize: frameSize, faces: faces))
        }
        return entries
    }

    /// "1001/30000", "3" or "0.5" (decimal seconds, made exact in milliseconds… microseconds).
    static func parseTime(_ text: String) -> MediaTime? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let value = Int64(parts[0]), let scale = Int32(parts[1]), scale > 0 {
            return MediaTime(value: value, timescale: scale)
        }
        if parts.count == 1, let value = Int64(text) { return MediaTime(value: value, timescale: 1) }
        return nil
    }

    /// JSON true/false arrive as NSNumbers too; Foundation marks them with the `char` type code.
    private static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    private static func integer(_ value: Any) -> Int? {
        guard let n = value as? NSNumber, !isBoolean(n) else { return nil }
        let d = n.doubleValue
        return d == d.rounded() && abs(d) < 1e12 ? Int(d) : nil
    }

    private static func number(_ value: Any) -> Double? {
        guard let n = value as? NSNumber, !isBoolean(n), n.doubleValue.isFinite else { return nil }
        return n.doubleValue
    }
}

/// Writes `--faces-out`: lines go to a temporary file beside the destination, renamed over it by
/// `commit()`; a run that fails never leaves a partial sidecar or touches an existing one. A FIFO or a
/// character device (`temporaryPath` nil) is written in place: renaming over it would replace it.
package final class FaceSidecarWriter: Sendable {
    package let path: String
    private let temporaryPath: String?
    private struct State: ~Copyable {
        var handle: FileHandle?
        var committed = false
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - path: where the sidecar goes (the caller has checked it: not an input, not another output).
    ///   - temporaryPath: the hidden file written until `commit()`; nil writes `path` in place.
    package init(path: String, temporaryPath: String?) throws {
        self.path = path
        self.temporaryPath = temporaryPath
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FaceSidecarError("\(path): the directory \(directory) does not exist")
        }
        let handle: FileHandle?
        if let temporaryPath {
            handle = FileManager.default.createFile(atPath: temporaryPath, contents: nil)
                ? FileHandle(forWritingAtPath: temporaryPath) : nil
        } else {
            // O_NONBLOCK: a FIFO with no reader yet must not hang the run before it starts.
            let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if descriptor >= 0 {
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
                handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            } else if errno == ENXIO {
                throw FaceSidecarError("\(path): a FIFO with no reader (start the reader first)")
            } else {
                handle = nil
            }
        }
        guard let handle else { throw FaceSidecarError("\(path): cannot write in \(directory)") }
        state = Mutex(State(handle: handle))
    }

    /// A writer to a regular file at `path`, through a hidden temporary beside it.
    package convenience init(path: String) throws {
        let url = URL(fileURLWithPath: path)
        try self.init(path: path, temporaryPath: url.deletingLastPathComponent().path + "/." + url.lastPathComponent
                                                 + ".\(getpid()).partial")
    }

    deinit {
        // Not committed: the run failed, so nothing is left behind.
        let committed = state.withLock { state -> Bool in
            try? state.handle?.close()
            state.handle = nil
            return state.committed
        }
        if !committed, let temporaryPath { try? FileManager.default.removeItem(atPath: temporaryPath) }
    }

    /// Appends one frame's line.
    package func write(_ frame: FaceFrame) throws {
        try state.withLock { state in
            guard let handle = state.handle else { throw FaceSidecarError("\(path): already finished") }
            do { try handle.write(contentsOf: Data((FaceSidecar.line(for: frame) + "\n").utf8)) } catch {
                throw FaceSidecarError("\(path): \(error.localizedDescription)")
            }
        }
    }

    /// Finishes the file and moves it into place.
    package func commit() throws {
        try state.withLock { state in
            guard let handle = state.handle else { return }
            state.handle = nil
            do {
                if temporaryPath != nil { try handle.synchronize() }  // fsync means nothing on a FIFO (EINVAL)
                try handle.close()
            } catch { throw FaceSidecarError("\(path): \(error.localizedDescription)") }
            if let temporaryPath, rename(temporaryPath, path) != 0 { throw SystemError("rename", code: errno, context: path) }
            state.committed = true
        }
    }
}

/// Faces from a sidecar (`--faces-in`) instead of a detector. Every frame's pts must have a line:
/// a sidecar made for another input is an error, not silently empty masks.
package final class SidecarFaceProvider: FaceRegionProvider {
    package let path: String
    private let entries: [MediaTime: FaceSidecar.Entry]
    private let served = Mutex(FaceDetectorStatistics())

    package init(path: String) throws {
        self.path = path
        let list = try FaceSidecar.read(path: path)
        guard !list.isEmpty else { throw FaceSidecarError("\(path): no lines (one per frame expected)") }
        entries = Dictionary(uniqueKeysWithValues: list.map { ($0.pts, $0) })
    }

    package func requests(frameIndex: Int, pts: MediaTime, frameSize: Size) -> [DetectionRequest] { [] }
    package func submit(frameIndex: Int, pts: MediaTime, images: [DetectionImage]) {}

    package func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame {
        guard let entry = entries[pts] else {
            throw FaceSidecarError("\(path): no line for frame \(frameIndex) at pts \(pts.value)/\(pts.timescale) "
                                   + "(was it written for another input?)")
        }
        var faces = entry.faces
        if let written = entry.frameSize, written != frameSize {
            for index in faces.indices { faces[index].box = faces[index].box.scaled(from: written, to: frameSize) }
        }
        served.withLock {
            $0.framesServed += 1
            if !faces.isEmpty { $0.framesWithFaces += 1 }
        }
        return FaceFrame(frameIndex: frameIndex, pts: pts, frameSize: frameSize, faces: faces, age: 0)
    }

    package var statistics: FaceDetectorStatistics { served.withLock { $0 } }
}
