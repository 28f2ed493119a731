/// One render pass of an ISF shader.
package struct ISFPass: Hashable, Sendable {
    /// The buffer the pass renders into, readable by later passes (and, when persistent, by the
    /// next frame) as an image of that name. Nil renders to the shader's output.
    package var target: String?
    /// The buffer keeps its contents from one frame to the next.
    package var persistent = false
    /// The buffer holds floats (RGBA16F/32F) rather than 8-bit colour.
    package var float = false
    /// Size expressions; nil means the render size.
    package var width: ISFSizeExpression?
    package var height: ISFSizeExpression?
}

/// An image file an ISF shader samples, named in its IMPORTED dictionary.
package struct ISFImportedImage: Hashable, Sendable {
    /// The sampler's name in the shader.
    package var name: String
    /// The path as written in the header.
    package var path: String
    /// The path resolved against the shader file's directory.
    package var resolvedPath: String
}

/// The JSON header of an ISF v2 file (v1 keys PERSISTENT_BUFFERS and array-style IMPORTED are read too).
package struct ISFDocument: Hashable, Sendable {
    package var description: String?
    package var credit: String?
    package var categories: [String]
    /// ISFVSN as written ("2", "2.0"); nil for v1 files that lack it.
    package var isfVersion: String?
    /// INPUTS in order, images included (type `.image`).
    package var inputs: [ShaderParameter]
    /// PASSES; one pass to the output when the header has none.
    package var passes: [ISFPass]
    package var importedImages: [ISFImportedImage]

    package init(description: String? = nil, credit: String? = nil, categories: [String] = [], isfVersion: String? = nil,
                inputs: [ShaderParameter] = [], passes: [ISFPass] = [ISFPass()], importedImages: [ISFImportedImage] = []) {
        self.description = description
        self.credit = credit
        self.categories = categories
        self.isfVersion = isfVersion
        self.inputs = inputs
        self.passes = passes
        self.importedImages = importedImages
    }

    /// The name of the image input that receives the frame being filtered.
    package static let filterInputName = "inputImage"

    /// An ISF file is a filter when it has an image input named `inputImage`; otherwise it is a generator.
    package var isFilter: Bool {
        inputs.contains { $0.name == Self.filterInputName && $0.type == .image }
    }

    /// Every name the body may sample as an image: image and audio inputs, pass targets, imported images.
    package var imageNames: [String] {
        inputs.filter { $0.type.isSampler }.map(\.name) + passes.compactMap(\.target) + importedImages.map(\.name)
    }

    /// Names the generated preamble declares; inputs and targets may not use them.
    package static let reservedNames: Set<String> = ["TIME", "TIMEDELTA", "FRAMEINDEX", "RENDERSIZE", "PASSINDEX", "DATE",
                                                    "isf_FragNormCoord", "isf_FragColor", "vv_FragNormCoord"]
}

/// Maps character offsets of a file to 1-based lines and columns.
struct TextPositions {
    let chars: [Character]
    private var lineStarts: [Int] = [0]

    init(_ text: String) {
        chars = Array(text)
        for (i, c) in chars.enumerated() where c == "\n" || c == "\r\n" || c == "\r" {
            lineStarts.append(i + 1)
        }
    }

    /// (line, column) of a character offset.
    func location(_ offset: Int) -> (line: Int, column: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return (low + 1, offset - lineStarts[low] + 1)
    }
}

extension ISFDocument {
    /// The ISF header of `text`, if the file starts with a `/*{ … }*/` comment, and the body lines
    /// after it (the header's characters on the closing line blanked so columns stay true).
    /// Returns nil when the file has no ISF header.
    static func parse(text: String, file: String) throws(ShaderLoadError) -> (ISFDocument, [SourceLine])? {
        let positions = TextPositions(text)
        let chars = positions.chars
        var i = 0
        while i < chars.count, chars[i].isWhitespace || chars[i] == "\u{FEFF}" { i += 1 }
        guard i + 1 < chars.count, chars[i] == "/", chars[i + 1] == "*" else { return nil }
        let commentStart = i
        var j = i + 2
        while j < chars.count, chars[j].isWhitespace { j += 1 }
        guard j < chars.count, chars[j] == "{" else { return nil }

        func fail(_ offset: Int, _ message: String) -> ShaderLoadError {
            let (line, column) = positions.location(offset)
            return ShaderLoadError(file: file, line: line, column: column, message: message)
        }

        // The comment ends at the first "*/".
        var end = j
        while end + 1 < chars.count, !(chars[end] == "*" && chars[end + 1] == "/") { end += 1 }
        guard end + 1 < chars.count else { throw fail(commentStart, "the ISF header comment '/*' is never closed with '*/'") }

        let json: PositionedJSON
        do throws(PositionedJSON.SyntaxError) {
            let (value, after) = try PositionedJSON.parse(chars, from: j, end: end)
            if after < end { throw PositionedJSON.SyntaxError(message: "unexpected '\(chars[after])' after the header's closing '}'", offset: after) }
            json = value
        } catch {
            throw fail(error.offset, "ISF header: " + error.message)
        }

        var reader = HeaderReader(file: file, positions: positions)
        let document = try reader.read(json)

        // Body: from the line holding "*/", with the header blanked on that line.
        let bodyOffset = end + 2
        let (line, column) = positions.location(bodyOffset)
        var lines = splitLines(text)
        var body: [SourceLine] = []
        let first = String(repeating: " ", count: column - 1) + String(Array(lines[line - 1]).dropFirst(column - 1))
        lines[line - 1] = first
        for index in (line - 1)..<lines.count {
            body.append(SourceLine(text: lines[index], file: file, line: index + 1))
        }
        return (document, body)
    }
}

/// Reads the header's JSON into an `ISFDocument`, failing at the position of the offending value.
private struct HeaderReader {
    let file: String
    let positions: TextPositions

    func fail(_ node: PositionedJSON, _ message: String, extra: Int = 0) -> ShaderLoadError {
        let (line, column) = positions.location(node.offset + extra)
        return ShaderLoadError(file: file, line: line, column: column, message: message)
    }

    func string(_ node: PositionedJSON?, _ what: String) throws(ShaderLoadError) -> String? {
        guard let node else { return nil }
        if case .string(let s) = node.value { return s }
        if case .number(let n) = node.value, what == "ISFVSN" || what == "VSN" { return String(n) }
        throw fail(node, "\(what) must be a string, found \(node.typeName)")
    }

    func number(_ node: PositionedJSON?, _ what: String) throws(ShaderLoadError) -> Double? {
        guard let node else { return nil }
        switch node.value {
        case .number(let n): return n
        case .bool(let b): return b ? 1 : 0
        case .null: return nil
        default: throw fail(node, "\(what) must be a number, found \(node.typeName)")
        }
    }

    func flag(_ node: PositionedJSON?, _ what: String) throws(ShaderLoadError) -> Bool {
        guard let node else { return false }
        switch node.value {
        case .bool(let b): return b
        case .number(let n): return n != 0
        case .string(let s) where ["true", "yes", "1"].contains(s.lowercased()): return true
        case .string(let s) where ["false", "no", "0"].contains(s.lowercased()): return false
        default: throw fail(node, "\(what) must be true or false, found \(node.typeName)")
        }
    }

    func vector(_ node: PositionedJSON?, _ what: String, counts: [Int]) throws(ShaderLoadError) -> ShaderValue? {
        guard let node else { return nil }
        guard case .array(let elements) = node.value else {
            throw fail(node, "\(what) must be an array of \(counts.map(String.init).joined(separator: " or ")) numbers, found \(node.typeName)")
        }
        guard counts.contains(elements.count) else {
            throw fail(node, "\(what) must have \(counts.map(String.init).joined(separator: " or ")) numbers, found \(elements.count)")
        }
        var values: [Double] = []
        for element in elements {
            guard case .number(let n) = element.value else { throw fail(element, "\(what) must hold numbers, found \(element.typeName)") }
            values.append(n)
        }
        if counts.contains(4), values.count == 3 { values.append(1) }
        return .vector(values)
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            && !name.hasPrefix("gl_") && !name.contains("__")
    }

    mutating func read(_ root: PositionedJSON) throws(ShaderLoadError) -> ISFDocument {
        guard case .object = root.value else { throw fail(root, "the ISF header must be a JSON object") }
        var document = ISFDocument()
        document.description = try string(root["DESCRIPTION"], "DESCRIPTION")
        document.credit = try string(root["CREDIT"], "CREDIT")
        document.isfVersion = try string(root["ISFVSN"], "ISFVSN")
        if let categories = root["CATEGORIES"] {
            guard case .array(let elements) = categories.value else { throw fail(categories, "CATEGORIES must be an array of strings") }
            for element in elements {
                guard let s = try string(element, "a category") else { continue }
                document.categories.append(s)
            }
        }

        var names: [String: PositionedJSON] = [:]
        func claim(_ name: String, _ node: PositionedJSON, _ what: String) throws(ShaderLoadError) {
            guard HeaderReader.isIdentifier(name) else { throw fail(node, "\(what) '\(name)' is not a valid GLSL identifier") }
            guard !ISFDocument.reservedNames.contains(name) else { throw fail(node, "\(what) '\(name)' clashes with a built-in ISF uniform") }
            if let earlier = names[name] {
                let (line, _) = positions.location(earlier.offset)
                throw fail(node, "\(what) '\(name)' is already used on line \(line)")
            }
            names[name] = node
        }

        if let inputs = root["INPUTS"] {
            guard case .array(let elements) = inputs.value else { throw fail(inputs, "INPUTS must be an array of objects") }
            for element in elements {
                let input = try readInput(element)
                try claim(input.name, element.member("NAME")!, "input")
                document.inputs.append(input)
            }
        }
        let numeric = Set(document.inputs.filter { [.float, .long, .bool, .event].contains($0.type) }.map(\.name))
        let known: @Sendable (String) -> Bool = { $0 == "WIDTH" || $0 == "HEIGHT" || numeric.contains($0) }

        if let passes = root["PASSES"] {
            guard case .array(let elements) = passes.value else { throw fail(passes, "PASSES must be an array of objects") }
            document.passes = []
            for element in elements {
                guard case .object = element.value else { throw fail(element, "each pass must be an object, found \(element.typeName)") }
                var pass = ISFPass()
                if let target = element.member("TARGET"), let name = try string(target, "TARGET"), !name.isEmpty {
                    try claim(name, target, "pass target")
                    pass.target = name
                }
                // Optional flags are read with the spec's spelling only, as both reference renderers read them: a
                // missing PERSISTENT means a temporary target, so a lenient "persistent" would change what the file does.
                pass.persistent = try flag(element["PERSISTENT"], "PERSISTENT")
                pass.float = try flag(element["FLOAT"], "FLOAT")
                pass.width = try sizeExpression(element.member("WIDTH"), "WIDTH", known: known)
                pass.height = try sizeExpression(element.member("HEIGHT"), "HEIGHT", known: known)
                document.passes.append(pass)
            }
            if document.passes.isEmpty { document.passes = [ISFPass()] }
        }

        // ISF v1: PERSISTENT_BUFFERS names the targets that persist.
        if let persistent = root["PERSISTENT_BUFFERS"] {
            var persistentNames: [String] = []
            switch persistent.value {
            case .array(let elements):
                for element in elements { if let s = try string(element, "a persistent buffer name") { persistentNames.append(s) } }
            case .object(let members):
                persistentNames = members.map(\.key)
            default:
                throw fail(persistent, "PERSISTENT_BUFFERS must be an array of names")
            }
            for index in document.passes.indices where document.passes[index].target.map(persistentNames.contains) ?? false {
                document.passes[index].persistent = true
            }
        }

        if let imported = root["IMPORTED"] {
            var entries: [(String, PositionedJSON, PositionedJSON)] = [] // name, name node, entry
            switch imported.value {
            case .object(let members):
                for member in members {
                    entries.append((member.key, PositionedJSON(value: .string(member.key), offset: member.keyOffset), member.value))
                }
            case .array(let elements):
                for element in elements {
                    guard let nameNode = element.member("NAME"), let name = try string(nameNode, "NAME") else {
                        throw fail(element, "each imported image needs a NAME")
                    }
                    entries.append((name, nameNode, element))
                }
            default:
                throw fail(imported, "IMPORTED must be an object of name → {\"PATH\": …}")
            }
            for (name, nameNode, entry) in entries {
                guard case .object = entry.value else { throw fail(entry, "imported image '\(name)' must be an object with a PATH") }
                if let type = entry.member("TYPE"), let t = try string(type, "TYPE"), t.lowercased() == "cube" {
                    throw fail(type, "cube-map imports are not supported")
                }
                guard let pathNode = entry.member("PATH"), let path = try string(pathNode, "PATH"), !path.isEmpty else {
                    throw fail(entry, "imported image '\(name)' needs a PATH")
                }
                try claim(name, nameNode, "imported image")
                document.importedImages.append(ISFImportedImage(name: name, path: path,
                                                                resolvedPath: ShaderPaths.resolve(path, relativeTo: file)))
            }
        }
        return document
    }

    func sizeExpression(_ node: PositionedJSON?, _ what: String, known: @escaping @Sendable (String) -> Bool) throws(ShaderLoadError) -> ISFSizeExpression? {
        guard let node else { return nil }
        switch node.value {
        case .number(let n): return .number(n)
        case .string(let s):
            do { return try ISFSizeExpression.parse(s, isKnown: known) } catch {
                throw fail(node, "\(what): " + error.message, extra: 1 + error.offset)
            }
        default:
            throw fail(node, "\(what) must be a number or an expression string, found \(node.typeName)")
        }
    }

    func readInput(_ node: PositionedJSON) throws(ShaderLoadError) -> ShaderParameter {
        guard case .object = node.value else { throw fail(node, "each input must be an object, found \(node.typeName)") }
        guard let nameNode = node.member("NAME") else { throw fail(node, "input without a NAME") }
        guard let name = try string(nameNode, "NAME") else { throw fail(nameNode, "NAME must be a string") }
        guard let typeNode = node.member("TYPE") else { throw fail(node, "input '\(name)' has no TYPE") }
        guard let typeName = try string(typeNode, "TYPE") else { throw fail(typeNode, "TYPE must be a string") }
        var parameter = ShaderParameter(name: name, label: try string(node.member("LABEL"), "LABEL"), type: .float)
        let defaultNode = node.member("DEFAULT"), minNode = node.member("MIN"), maxNode = node.member("MAX")
        switch typeName {
        case "float":
            parameter.type = .float
            parameter.defaultValue = try number(defaultNode, "DEFAULT").map(ShaderValue.float)
            parameter.minimum = try number(minNode, "MIN").map(ShaderValue.float)
            parameter.maximum = try number(maxNode, "MAX").map(ShaderValue.float)
            parameter.identity = try number(node.member("IDENTITY"), "IDENTITY").map(ShaderValue.float)
        case "bool":
            parameter.type = .bool
            parameter.defaultValue = try number(defaultNode, "DEFAULT").map { .bool($0 != 0) }
        case "event":
            parameter.type = .event
        case "long":
            parameter.type = .long
            func int(_ n: Node?, _ what: String) throws(ShaderLoadError) -> Int? {
                guard let v = try number(n, what) else { return nil }
                guard v == v.rounded(), abs(v) < 1e9 else { throw fail(n!, "\(what) of a long input must be a whole number") }
                return Int(v)
            }
            parameter.defaultValue = try int(defaultNode, "DEFAULT").map(ShaderValue.int)
            parameter.minimum = try int(minNode, "MIN").map(ShaderValue.int)
            parameter.maximum = try int(maxNode, "MAX").map(ShaderValue.int)
            if let valuesNode = node.member("VALUES") {
                guard case .array(let elements) = valuesNode.value else { throw fail(valuesNode, "VALUES must be an array of numbers") }
                for element in elements { if let v = try int(element, "each of VALUES") { parameter.values.append(v) } }
            }
            if let labelsNode = node.member("LABELS") {
                guard case .array(let elements) = labelsNode.value else { throw fail(labelsNode, "LABELS must be an array of strings") }
                for element in elements { if let s = try string(element, "each of LABELS") { parameter.labels.append(s) } }
                if !parameter.values.isEmpty, parameter.labels.count != parameter.values.count {
                    throw fail(labelsNode, "LABELS has \(parameter.labels.count) entries but VALUES has \(parameter.values.count)")
                }
                if parameter.values.isEmpty { parameter.values = Array(0..<parameter.labels.count) }
            }
        case "point2D":
            parameter.type = .point2D
            parameter.defaultValue = try vector(defaultNode, "DEFAULT", counts: [2])
            parameter.minimum = try vector(minNode, "MIN", counts: [2])
            parameter.maximum = try vector(maxNode, "MAX", counts: [2])
        case "color":
            parameter.type = .color
            parameter.defaultValue = try vector(defaultNode, "DEFAULT", counts: [3, 4])
            parameter.minimum = try vector(minNode, "MIN", counts: [3, 4])
            parameter.maximum = try vector(maxNode, "MAX", counts: [3, 4])
        case "image":
            parameter.type = .image
        case "audio", "audioFFT":
            // MAX is the most samples (audio) or bins (audioFFT) the shader wants: a whole number ≥ 1.
            parameter.type = typeName == "audio" ? .audio : .audioFFT
            if let maxNode, let columns = try number(maxNode, "MAX") {
                guard columns == columns.rounded(), columns >= 1, columns < 1e9 else {
                    throw fail(maxNode, "MAX of \(typeName) input '\(name)' must be a whole number of \(typeName == "audio" ? "samples" : "bins") ≥ 1")
                }
                parameter.maximum = .int(Int(columns))
            }
        case "cube":
            throw fail(typeNode, "input '\(name)': cube-map inputs are not supported by Prism")
        default:
            throw fail(typeNode, "input '\(name)' has unknown TYPE '\(typeName)' (expected event, bool, long, float, point2D, color, image, audio or audioFFT)")
        }
        return parameter
    }

    typealias Node = PositionedJSON
}
