/// The `@param` convention for plain GLSL and ShaderToy shaders.
///
/// A uniform becomes a parameter (settable from the graph, `my.fs(amount=0.3)`) when its
/// declaration line ends with a `// @param` comment:
///
/// ```glsl
/// uniform float amount;   // @param min=0 max=1 default=0.5 label="Amount"
/// uniform int mode;       // @param values=0,1,2 labels="Soft,Hard,Linear light" default=1
/// uniform bool invert;    // @param default=true
/// uniform bool flash;     // @param event
/// uniform vec2 center;    // @param default=0.5,0.5 min=0,0 max=1,1
/// uniform vec3 gain;      // @param default=1,1,1
/// uniform vec4 tint;      // @param color default=1,0.5,0,1
/// ```
///
/// - One uniform per line: `uniform [precision] TYPE NAME;` with TYPE float, int, bool, vec2, vec3
///   or vec4. The comment follows on the same line.
/// - Settings are `key=value` words separated by blanks; a value with blanks is double-quoted.
///   Keys: `default`, `min`, `max`, `identity` (numbers; vectors as comma-separated numbers;
///   bools `true`/`false`/`1`/`0`), `label` (text), `values` (ints) and `labels` (comma-separated
///   text) for int choices. Flags: `color` (vec4 is a colour; it is anyway), `event` (bool is a
///   one-frame trigger).
/// - Types map onto `ShaderParameterType`: float → float, int → long, bool → bool (or event),
///   vec2 → point2D, vec3 → vector3, vec4 → color.
enum ParamComments {
    static func parameters(in lines: [SourceLine]) throws(ShaderLoadError) -> [ShaderParameter] {
        var parameters: [ShaderParameter] = []
        for line in lines {
            guard let marker = line.text.range(of: "@param") else { continue }
            guard let commentStart = line.text.range(of: "//"), commentStart.lowerBound < marker.lowerBound else { continue }
            let markerColumn = line.text.distance(from: line.text.startIndex, to: marker.lowerBound) + 1
            func fail(_ message: String) -> ShaderLoadError {
                ShaderLoadError(file: line.file, line: line.line, column: markerColumn, message: message)
            }
            let code = String(line.text[..<commentStart.lowerBound])
            let settings = String(line.text[marker.upperBound...])
            guard let (type, name) = uniformDeclaration(code) else {
                throw fail("@param must follow a declaration 'uniform TYPE NAME;' on the same line")
            }
            var parameter: ShaderParameter
            switch type {
            case "float": parameter = ShaderParameter(name: name, type: .float)
            case "int": parameter = ShaderParameter(name: name, type: .long)
            case "bool": parameter = ShaderParameter(name: name, type: .bool)
            case "vec2": parameter = ShaderParameter(name: name, type: .point2D)
            case "vec3": parameter = ShaderParameter(name: name, type: .vector3)
            case "vec4": parameter = ShaderParameter(name: name, type: .color)
            default: throw fail("@param on a uniform of type \(type): only float, int, bool, vec2, vec3 and vec4 are parameters")
            }
            guard !parameters.contains(where: { $0.name == name }) else { throw fail("'\(name)' is already a parameter") }
            for (key, setting) in try settingWords(settings, fail: fail) {
                switch (key, setting) {
                case ("color", nil):
                    guard parameter.type == .color else { throw fail("'color' applies to vec4 uniforms only") }
                case ("event", nil):
                    guard parameter.type == .bool else { throw fail("'event' applies to bool uniforms only") }
                    parameter.type = .event
                case ("label", let v?): parameter.label = v
                case ("default", let v?): parameter.defaultValue = try parseValue(v, parameter.type, key, fail)
                case ("min", let v?): parameter.minimum = try parseValue(v, parameter.type, key, fail)
                case ("max", let v?): parameter.maximum = try parseValue(v, parameter.type, key, fail)
                case ("identity", let v?): parameter.identity = try parseValue(v, parameter.type, key, fail)
                case ("values", let v?):
                    guard parameter.type == .long else { throw fail("'values' applies to int uniforms only") }
                    parameter.values = []
                    for item in v.split(separator: ",") {
                        guard let n = Int(String(item).trimmingLeadingWhitespace().trimmingTrailingWhitespace()) else {
                            throw fail("values: '\(item)' is not a whole number")
                        }
                        parameter.values.append(n)
                    }
                case ("labels", let v?):
                    guard parameter.type == .long else { throw fail("'labels' applies to int uniforms only") }
                    parameter.labels = v.split(separator: ",").map { String($0).trimmingLeadingWhitespace().trimmingTrailingWhitespace() }
                case (_, nil): throw fail("unknown @param flag '\(key)' (known: color, event)")
                default: throw fail("unknown @param setting '\(key)' (known: default, min, max, identity, label, values, labels)")
                }
            }
            if parameter.type == .long, !parameter.labels.isEmpty {
                if parameter.values.isEmpty { parameter.values = Array(0..<parameter.labels.count) }
                guard parameter.values.count == parameter.labels.count else {
                    throw fail("labels has \(parameter.labels.count) entries but values has \(parameter.values.count)")
                }
            }
            parameters.append(parameter)
        }
        return parameters
    }

    /// `uniform [lowp|mediump|highp] TYPE NAME;` → (TYPE, NAME).
    static func uniformDeclaration(_ code: String) -> (String, String)? {
        var words = code.replacingSemicolons().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.first == "uniform" else { return nil }
        words.removeFirst()
        if let first = words.first, ["lowp", "mediump", "highp"].contains(first) { words.removeFirst() }
        guard words.count == 2, code.contains(";") else { return nil }
        return (words[0], words[1])
    }

    private static func settingWords(_ text: String, fail: (String) -> ShaderLoadError) throws(ShaderLoadError) -> [(String, String?)] {
        var result: [(String, String?)] = []
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 }
            guard i < chars.count else { break }
            var key = ""
            while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" { key.append(chars[i]); i += 1 }
            guard !key.isEmpty else { throw fail("unexpected '\(chars[i])' in @param settings") }
            guard i < chars.count, chars[i] == "=" else {
                result.append((key, nil))
                continue
            }
            i += 1
            var value = ""
            if i < chars.count, chars[i] == "\"" {
                i += 1
                while i < chars.count, chars[i] != "\"" { value.append(chars[i]); i += 1 }
                guard i < chars.count else { throw fail("unterminated quoted value for '\(key)'") }
                i += 1
            } else {
                while i < chars.count, chars[i] != " ", chars[i] != "\t" { value.append(chars[i]); i += 1 }
            }
            result.append((key, value))
        }
        return result
    }

    private static func parseValue(_ text: String, _ type: ShaderParameterType, _ key: String,
                              _ fail: (String) -> ShaderLoadError) throws(ShaderLoadError) -> ShaderValue {
        switch type {
        case .bool, .event:
            switch text.lowercased() {
            case "true", "1": return .bool(true)
            case "false", "0": return .bool(false)
            default: throw fail("\(key): '\(text)' is not true or false")
            }
        case .long:
            guard let n = Int(text) else { throw fail("\(key): '\(text)' is not a whole number") }
            return .int(n)
        case .float:
            guard let v = GraphParser.number(from: text) else { throw fail("\(key): '\(text)' is not a number") }
            return .float(v)
        case .point2D, .vector3, .color, .image, .audio, .audioFFT:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            var numbers: [Double] = []
            for part in parts {
                guard let v = GraphParser.number(from: String(part)) else { throw fail("\(key): '\(part)' is not a number") }
                numbers.append(v)
            }
            let count = type.componentCount
            if type == .color, numbers.count == 3 { numbers.append(1) }
            guard numbers.count == count else { throw fail("\(key) needs \(count) comma-separated numbers, found \(numbers.count)") }
            return .vector(numbers)
        }
    }
}

private extension String {
    func replacingSemicolons() -> String { String(map { $0 == ";" ? " " : $0 }) }
}
