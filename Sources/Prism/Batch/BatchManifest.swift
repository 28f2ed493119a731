import Foundation
import PrismCore
import PrismFilters
import PrismMedia

/// The `run` settings a job may set; any it leaves out come from the command line (`prism batch M --crf 20`).
/// The same option groups `run` reads (`EncoderChoice`, `InputChoice`), read from a manifest line or from
/// batch's own command line by the same code.
struct JobSettings: Sendable, Equatable {
    var filter: String?
    var encoder = EncoderChoice()
    var input = InputChoice()
    var frames: Int?

    init() {}

    /// Every setting `source` gives, each read and checked by its option's value type.
    init(from source: inout some OptionSource) throws {
        filter = try source.value(Key.filter)?.text
        encoder = try EncoderChoice(from: &source)
        input = try InputChoice(from: &source)
        frames = try source.value(Key.frames)
    }

    /// The options, declared once for `batch`'s command line (its job defaults) and the manifest's keys.
    /// The settings of a job beside the groups', declared once.
    enum Key {
        static let filter = OptionKey<FilterText>("--filter", "-f", value: "SPEC", help: "the filter graph, e.g. 'invert, mono'")
        static let frames = OptionKey<Int>("--frames", value: "N", in: 1...100_000_000, help: "stop after N frames")
    }

    static let options: [OptionSpec] = [Key.filter.spec]
        + EncoderChoice.options + [InputChoice.Key.size.spec, InputChoice.Key.fps.spec]
        + [Key.frames.spec, InputChoice.Key.duration.spec]

    /// The keys a manifest line may set, as the options spell them without their dashes.
    static let keys = options.map { String($0.name.dropFirst(2)) }
    /// Keys a manifest may give as a JSON number as well as a string.
    static let numericKeys = EncoderChoice.numericKeys.union(InputChoice.numericKeys).union(["frames"])

    /// Each field of `self`, or else `defaults`'.
    func over(_ defaults: JobSettings) -> JobSettings {
        var result = JobSettings()
        result.filter = filter ?? defaults.filter
        result.encoder = encoder.over(defaults.encoder)
        result.input = input.over(defaults.input)
        result.frames = frames ?? defaults.frames
        return result
    }

    /// Checks and sets one setting from its text form (the command line's spelling and the manifest's);
    /// returns false for a key that is not a setting. Errors name the setting as `name` (the key by default).
    mutating func set(_ key: String, text: String, name: String? = nil) throws -> Bool {
        guard Self.keys.contains(key) else { return false }
        var source = SingleOption(key: key, value: text, name: name ?? key)
        self = try JobSettings(from: &source).over(self)
        return true
    }

    /// The settings as text, for the job's fingerprint.
    var arguments: [(key: String, value: String)] {
        var list: [(String, String)] = []
        if let filter { list.append(("filter", filter)) }
        list += encoder.arguments
        let input = self.input.arguments
        list += input.filter { $0.key != "duration" }
        if let frames { list.append(("frames", String(frames))) }
        list += input.filter { $0.key == "duration" }
        return list
    }
}

/// A manifest line's fields as an option source: strings as they are, JSON numbers for the keys that take
/// numbers as the text a command line would give; any other type is refused, naming the key.
struct ManifestFields: OptionSource {
    let fields: [String: JSONValue]

    mutating func text(for key: String) throws -> String? {
        guard let field = fields[key] else { return nil }
        switch field {
        case .string(let string): return string
        case .number(let number) where JobSettings.numericKeys.contains(key):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        default:
            throw UsageError("\(spelling(for: key)) must be \(JobSettings.numericKeys.contains(key) ? "a number or a string" : "a string"), not \(field.typeName)")
        }
    }

    mutating func flag(for key: String) throws -> Bool {
        guard let field = fields[key] else { return false }
        guard case .bool(let value) = field else { throw UsageError("\(spelling(for: key)) must be true or false, not \(field.typeName)") }
        return value
    }

    func spelling(for key: String) -> String { "\"\(key)\"" }
}

/// One line of a manifest, resolved: absolute paths, every setting final.
struct BatchJob: Sendable, Equatable {
    /// Names the job in results and reports: the line's `id`, else its output path as written.
    var id: String
    /// 1-based line in the manifest (for messages).
    var line: Int
    /// 0-based position among the manifest's jobs: what shards divide.
    var index: Int
    /// An absolute path or URL, or "pattern" for the built-in test pattern.
    var input: String
    var output: String
    var settings: JobSettings

    /// Identifies what the job would produce: a finished job whose fingerprint changed (another filter,
    /// codec, input…) is run again rather than skipped.
    var fingerprint: String {
        var text = "input=\(input)\noutput=\(output)\n"
        for (key, value) in settings.arguments { text += "\(key)=\(value)\n" }
        return fnv1aHex(text.utf8)
    }

    /// The `prism run` options for this job, writing to `outputPath` (the batch's temporary name).
    func runOptions(outputPath: String) -> RunOptions {
        var options = RunOptions()
        options.input = input == "pattern" ? .pattern : .movie(input)
        options.output = .movie(outputPath)
        options.filter = settings.filter ?? ""
        settings.encoder.apply(to: &options.session.encoder)
        settings.input.apply(to: &options.session)
        options.session.frameLimit = settings.frames
        options.quiet = true
        options.progress = false
        return options
    }
}

/// A problem in a manifest: `file:line: message`.
struct ManifestError: PrismError {
    let path: String
    let line: Int?
    let message: String
    /// How many other problems were found (listed in one line: the first, and a count).
    var more = 0
    var description: String {
        (line.map { "\(path):\($0): " } ?? "\(path): ") + message
            + (more > 0 ? " (and \(more) more problem\(more == 1 ? "" : "s") in the manifest)" : "")
    }
    var diagnostics: [Diagnostic] { [Diagnostic(file: path, line: line, message: message)] }
}

/// A JSON Lines job list: one object per line, blank lines and lines starting with `#` ignored.
///
///     {"input": "clips/a.mp4", "output": "out/a.mp4", "filter": "invert, mono", "crf": 20}
///
/// Relative paths are relative to the manifest's directory, so a manifest means the same thing from any
/// working directory (a Slurm task, a Kubernetes pod). Every line is checked before any job runs.
struct BatchManifest: Sendable {
    let path: String
    let jobs: [BatchJob]

    static let keys = ["id", "input", "output"] + JobSettings.keys

    /// The longest job line: a filter text at its limit, two paths of PATH_MAX and the other settings
    /// fit. Longer lines are refused unread, so a damaged manifest costs no parse.
    static let maximumLineBytes = 256 << 10

    /// Reads and checks `path`. `defaults` fill what a line leaves out; without an `output`, a line's
    /// output is `outputDirectory`/INPUT-NAME with the codec's usual extension.
    init(path: String, defaults: JobSettings = JobSettings(), outputDirectory: String? = nil) throws {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("\(path): cannot read the manifest (\(String(cString: strerror(errno))))")
        }
        let base = Self.absolute((path as NSString).deletingLastPathComponent, relativeTo: FileManager.default.currentDirectoryPath)
        let outputDirectory = outputDirectory.map { Self.absolute($0, relativeTo: FileManager.default.currentDirectoryPath) }
        var jobs: [BatchJob] = []
        var problems: [ManifestError] = []
        // Outputs by what they name on disk, so two spellings of one file (a symlinked folder) are one.
        var outputs: [String: Int] = [:]  // PathIdentity.entry → line
        var outputFiles: [String: Int] = [:]  // PathIdentity.file of outputs that exist → line
        var ids: [String: Int] = [:]
        var graphs = GraphChecks()
        try JSONLines.forEach(in: data) { line, rawLine in
            do {
                guard rawLine.count <= Self.maximumLineBytes else {
                    throw UsageError("the line is \(rawLine.count) bytes, over the limit of \(Self.maximumLineBytes >> 10) KiB for one job")
                }
                let text = String(decoding: rawLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if text.isEmpty || text.hasPrefix("#") { return }
                var job = try Self.parse(text, base: base, defaults: defaults, outputDirectory: outputDirectory, graphs: &graphs)
                job.line = line
                job.index = jobs.count
                let output = PathIdentity(job.output)
                if let first = outputs[output.entry] {
                    throw UsageError("output \(job.output) is also line \(first)'s (the same file, however spelt): "
                                     + "two jobs cannot write one file")
                }
                if let first = ids[job.id] { throw UsageError("id '\(job.id)' is also line \(first)'s") }
                outputs[output.entry] = line
                if let file = output.file { outputFiles[file] = line }
                ids[job.id] = line
                jobs.append(job)
            } catch let error as PrismError {
                problems.append(ManifestError(path: path, line: line, message: error.description))
            }
        }
        problems += Self.readsOfOutputs(jobs, outputs: outputs, files: outputFiles).map { ManifestError(path: path, line: $0.line, message: $0.message) }
        problems.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        if var first = problems.first {
            first.more = problems.count - 1
            throw first
        }
        guard !jobs.isEmpty else { throw ManifestError(path: path, line: nil, message: "no jobs (one JSON object per line)") }
        self.jobs = jobs
    }

    /// Jobs whose input is a job's output (their own or another's, through any spelling, symlink or hard
    /// link): refused, since the input would be read stale, or while it is written, and a rerun would
    /// count the job done for ever.
    private static func readsOfOutputs(_ jobs: [BatchJob], outputs: [String: Int], files: [String: Int]) -> [(line: Int, message: String)] {
        var found: [(Int, String)] = []
        for job in jobs where job.input.hasPrefix("/") {
            let input = PathIdentity(job.input, followingLink: true)
            guard let writer = outputs[input.entry] ?? input.file.flatMap({ files[$0] }) else { continue }
            found.append((job.line, writer == job.line
                ? "output is the input file"
                : "input \(job.input) is line \(writer)'s output: a job cannot read what another job of the batch writes "
                    + "(run it in a batch of its own afterwards)"))
        }
        return found
    }

    /// Filter texts checked so far: a manifest's lines mostly share one graph, bound once.
    struct GraphChecks {
        private var checked: [String: String?] = [:]  // text → the problem, nil when fine
        private var nodeLimit: Result<Int, InvalidRequest>?

        /// Binds `text` as `run` does and applies `run`'s limit on filters per graph.
        mutating func check(_ text: String) throws {
            if let known = checked[text] {
                if let problem = known { throw UsageError(problem) }
                return
            }
            do {
                let graph = try PrismGraphs.binder().bind(text)
                try GraphLimits.checkNodeCount(graph.nodes.count, limit: try limit())
                checked[text] = .some(nil)
            } catch let error as PrismError {
                let problem = "\"filter\": \(error.description)"
                checked[text] = .some(problem)
                throw UsageError(problem)
            }
        }

        private mutating func limit() throws -> Int {
            if nodeLimit == nil {
                do { nodeLimit = .success(try GraphLimits.maxNodes()) } catch let error as InvalidRequest { nodeLimit = .failure(error) }
            }
            return try nodeLimit!.get()
        }
    }

    private static func parse(_ text: String, base: String, defaults: JobSettings, outputDirectory: String?,
                              graphs: inout GraphChecks) throws -> BatchJob {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw UsageError("not valid JSON (one job per line: {\"input\": \"a.mp4\", \"output\": \"out/a.mp4\"})")
        }
        guard case .object(let fields) = value else { throw UsageError("a job is a JSON object, not \(value.typeName)") }
        for key in fields.keys.sorted() where !keys.contains(key) {
            throw UsageError("unknown key \(key.debugDescription)" + Self.suggestion(for: key) + " (keys: \(keys.joined(separator: ", ")))")
        }
        var source = ManifestFields(fields: fields)
        let input = try source.text(for: "input"), output = try source.text(for: "output"), id = try source.text(for: "id")
        var settings = try JobSettings(from: &source)
        guard let input, !input.isEmpty else { throw UsageError("a job needs \"input\" (a file, a URL, or \"pattern\")") }
        let resolvedInput: String
        if input == "pattern" || input.contains("://") {
            resolvedInput = input
        } else {
            resolvedInput = absolute(input, relativeTo: base)
            guard FileManager.default.fileExists(atPath: resolvedInput) else { throw UsageError("input \(resolvedInput): no such file") }
        }
        settings = settings.over(defaults)
        if let filter = settings.filter { try graphs.check(filter) }
        let resolvedOutput: String
        if let output, !output.isEmpty {
            resolvedOutput = absolute(output, relativeTo: base)
        } else if let outputDirectory {
            let stem = input == "pattern" ? "pattern" : ((input as NSString).lastPathComponent as NSString).deletingPathExtension
            resolvedOutput = outputDirectory + "/" + stem + "." + (settings.encoder.codec ?? .h264).defaultContainer
        } else {
            throw UsageError("a job needs \"output\" (or give prism batch --output-dir DIR)")
        }
        try checkContainer(resolvedOutput, codec: settings.encoder.codec ?? .h264)
        return BatchJob(id: id ?? output ?? resolvedOutput, line: 0, index: 0, input: resolvedInput, output: resolvedOutput,
                        settings: settings)
    }

    /// "; did you mean "crf"?" for a key that is a near miss of a known one.
    private static func suggestion(for key: String) -> String {
        NearestName.suggestion(for: key, among: keys, quote: "\"")
    }

    /// The containers a batch writes and the codecs each holds; anything else is refused before work starts
    /// (the writer would only find out when the job starts).
    private static func checkContainer(_ path: String, codec: VideoEncoderSettings.Codec) throws {
        let ext = (path as NSString).pathExtension.lowercased()
        let holds: [String: Set<VideoEncoderSettings.Codec>] = [
            "mp4": [.h264, .hevc, .av1], "m4v": [.h264, .hevc], "mov": [.h264, .hevc, .prores],
            "mkv": [.h264, .hevc, .ffv1, .prores, .av1],
        ]
        guard let codecs = holds[ext] else {
            throw UsageError("output \(path): use .mp4, .mov or .mkv (the extension picks the container)")
        }
        guard codecs.contains(codec) else {
            throw UsageError("output \(path): a .\(ext) file cannot hold \(codec.rawValue) (use .\(codec.defaultContainer))")
        }
    }

    static func absolute(_ path: String, relativeTo base: String) -> String {
        let joined = path.hasPrefix("/") ? path : (base.isEmpty ? path : base + "/" + path)
        return URL(fileURLWithPath: joined).standardizedFileURL.path
    }
}
