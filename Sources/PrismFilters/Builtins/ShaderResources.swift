import Foundation

/// The package's resource folder (`Shaders/`, as SwiftPM copies it into `Prism_PrismFilters.resources`),
/// found where the code runs from: beside the program (SwiftPM's own rule: `prism` and its folder side by
/// side), then beside the image that holds this code (libprism.so, or the program), in its `prism/` folder,
/// or in `../lib/prism/` from it — where `scripts/install-lib` puts it: libprism.so is loaded into programs
/// that are not Prism's (Python, gst-launch-1.0), so "beside the program" finds nothing — and last where
/// the build wrote it.
enum ShaderResources {
    static let folderName = "Prism_PrismFilters.resources"

    static let bundle: Bundle = {
        var candidates = [Bundle.main.bundleURL.appendingPathComponent(folderName).path]
        if let image = imagePath(holding: #dsohandle) {
            let folder = (image as NSString).deletingLastPathComponent
            candidates += [folder + "/" + folderName, folder + "/prism/" + folderName, folder + "/../lib/prism/" + folderName]
        }
        for candidate in candidates {
            if let bundle = Bundle(path: candidate) { return bundle }
        }
        // The build's own folder (SwiftPM's accessor; it stops the program when that is gone too).
        return Bundle.module
    }()

    /// The file mapped at `address` (the program or a shared library), from /proc/self/maps (glibc's
    /// `dladdr` needs _GNU_SOURCE, which Swift's Glibc module is not built with).
    static func imagePath(holding address: UnsafeRawPointer) -> String? {
        // Read to the end: procfs files say they are empty, and readers that trust the size read nothing.
        guard let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        let target = UInt(bitPattern: address)
        for line in maps.split(separator: "\n") {
            // start-end perms offset dev inode path
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, let dash = fields[0].firstIndex(of: "-"),
                  let start = UInt(fields[0][..<dash], radix: 16),
                  let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16),
                  (start..<end).contains(target) else { continue }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            return path.hasPrefix("/") ? path : nil
        }
        return nil
    }
}
