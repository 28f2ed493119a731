import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import XCTest
@testable import Prism
#if canImport(Glibc)
import Glibc
#endif

/// One fuzz target per parser (issue 9, "keep it that way"). Each runs the corpus, then seeded
/// mutations for a bounded time; a trap or stack overflow fails the run, and every refusal must be
/// one line. The sizes parsed inputs lead to are computed too, since that is where the traps were.
final class ParserFuzzTests: XCTestCase {
    static let sizes = [Size(width: 1, height: 1), Size(width: 160, height: 90), Size(width: 16384, height: 16384)]

    /// Renders `graph` on a small image with the default limits; any refusal must be one line.
    /// Only the first `budget` graphs render (llvmpipe compiles are the slow part).
    private func renderSome(_ graph: FilterGraph, _ text: String, rendered: inout Int, budget: Int = renderBudget) {
        guard rendered < budget, let context = try? FuzzGPU.shared() else { return }
        rendered += 1
        let rgba = [UInt8](repeating: 128, count: 24 * 16 * 4)
        do {
            _ = try FrameEngine.renderStill(graph, image: RGBAImage(size: Size(width: 24, height: 16), pixels: rgba), gpu: context)
        } catch {
            assertOneLine(error, text)
        }
    }

    /// Renders per target (`PRISM_FUZZ_RENDERS`, default 25).
    static let renderBudget = ProcessInfo.processInfo.environment["PRISM_FUZZ_RENDERS"].flatMap { Int($0) } ?? 25

    func testFuzzFilterGraphText() {
        let binder = GraphBinder()
        var bound = 0, rendered = 0
        let tried = Fuzzer(corpus: FuzzCorpus.graphs, dictionary: FuzzCorpus.graphDictionary).run("graph") { text in
            do {
                _ = try GraphParser.parse(text)
            } catch {
                assertOneLine(error, text)
            }
            do {
                let graph = try binder.bind(text)
                bound += 1
                for node in graph.nodes {
                    for size in Self.sizes {
                        let inputs = Array(repeating: size, count: node.inputs.count)
                        _ = try? node.kernel.outputSize(inputSizes: inputs, sourceSize: size)
                        for prepass in node.kernel.prepasses { _ = prepass.size(inputs) }
                    }
                }
                renderSome(graph, text, rendered: &rendered)
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(bound, 5, "some inputs are valid graphs")
        print("fuzz graph: \(tried) inputs, \(bound) bound, \(rendered) rendered")
    }

    func testFuzzISFHeaderAndSizeExpressions() {
        let files = MemoryFiles()
        var loaded = 0, rendered = 0
        let directory = NSTemporaryDirectory() + "/prism-fuzz-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tried = Fuzzer(corpus: FuzzCorpus.shaders, dictionary: FuzzCorpus.shaderDictionary).run("isf") { text in
            do {
                let shader = try UserShader.load(source: text, path: "/fuzz/shader.fs", fileSystem: files)
                loaded += 1
                let specs = UserShaderKernel.parameterSpecs(for: shader)
                for pass in shader.passes {
                    for expression in [pass.width, pass.height].compactMap({ $0 }) {
                        for value in [0, 0.5, -1, 1e300, -1e300, .infinity, .nan, 1e19] {
                            let inputs = Dictionary(uniqueKeysWithValues: shader.parameters.map { ($0.name, value) })
                            let pixels = expression.pixels(width: 16384, height: 16384, inputs: inputs, fallback: 7)
                            XCTAssertTrue((1...ISFSizeExpression.pixelCeiling).contains(pixels), "\(expression): \(pixels)")
                        }
                    }
                }
                _ = specs
                // Through the graph and the compiler, as `prism render --filter shader.fs` would.
                if rendered < Self.renderBudget {
                    let path = directory + "/shader\(loaded).fs"
                    try? text.write(toFile: path, atomically: true, encoding: .utf8)
                    if let graph = try? GraphBinder().bind("\"" + path + "\"") { renderSome(graph, text, rendered: &rendered) }
                }
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(loaded, 3, "some inputs are valid shaders")
        print("fuzz isf: \(tried) inputs, \(loaded) loaded, \(rendered) rendered")

        var parsed = 0
        let expressions = Fuzzer(corpus: FuzzCorpus.sizeExpressions, dictionary: FuzzCorpus.sizeDictionary).run("size") { text in
            do {
                let expression = try ISFSizeExpression.parse(text) { ["WIDTH", "HEIGHT", "scale", "taps"].contains($0) }
                parsed += 1
                _ = expression.description
                _ = expression.variables
                for value in [0, 1e308, -1e308, .nan, .infinity] {
                    let pixels = expression.pixels(width: 1920, height: 1080, inputs: ["scale": value, "taps": value], fallback: 3)
                    XCTAssertTrue((1...ISFSizeExpression.pixelCeiling).contains(pixels))
                }
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(parsed, 5)
        print("fuzz size expressions: \(expressions) inputs, \(parsed) parsed")
    }

    func testFuzzCubeLUT() {
        var parsed = 0
        let tried = Fuzzer(corpus: FuzzCorpus.cubes, dictionary: FuzzCorpus.cubeDictionary).run("cube") { text in
            do {
                let lut = try CubeLUT(parsing: text)
                parsed += 1
                for sample in [SIMD3<Float>(0, 0, 0), SIMD3(0.5, 0.25, 1), SIMD3(-1e30, 1e30, .nan), SIMD3(1, 1, 1)] {
                    _ = lut.apply(sample)
                }
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(parsed, 2)
        print("fuzz cube: \(tried) inputs, \(parsed) parsed")
    }

    func testFuzzRawInputFormat() {
        var parsed = 0
        let tried = Fuzzer(corpus: FuzzCorpus.rawFormats, dictionary: FuzzCorpus.rawDictionary).run("raw") { text in
            do {
                let format = try RawVideoFormat(parsing: text)
                parsed += 1
                XCTAssertGreaterThan(format.frameBytes, 0, text)
                XCTAssertGreaterThan(format.frameRate.num, 0, text)
                XCTAssertGreaterThan(format.frameRate.den, 0, text)
                _ = format.description
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(parsed, 3)
        print("fuzz raw format: \(tried) inputs, \(parsed) parsed")
    }

    /// The request gate and the parameter bodies of `/param`, without sockets (fast, many inputs).
    func testFuzzRequestGateAndParameterBodies() throws {
        let gate = RequestGate(bindAddress: "127.0.0.1", port: 8080)
        let headerNames = ["Host", "Origin", "Content-Type", "Sec-Fetch-Site", "Sec-Fetch-Mode"]
        var allowed = 0
        let tried = Fuzzer(corpus: FuzzCorpus.requests.map { $0.replacingOccurrences(of: "PORT", with: "8080") },
                           dictionary: FuzzCorpus.requestDictionary).run("gate") { text in
            var headers: [String: String] = [:]
            let lines = text.components(separatedBy: "\r\n")
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
            let method = lines.first?.split(separator: " ").first.map(String.init) ?? ""
            let refusal = gate.refusal(method: method, path: "/", header: { headers[$0] })
            if refusal == nil {
                allowed += 1
                // Whatever passes named this server and, for POSTs, was JSON.
                XCTAssertTrue(["127.0.0.1:8080", "localhost:8080", "[::1]:8080"].contains(headers["Host"]?.lowercased() ?? ""), text)
                if method == "POST" { XCTAssertTrue(headers["Content-Type"]?.lowercased().hasPrefix("application/json") == true, text) }
            }
            _ = headerNames
        }
        XCTAssertGreaterThan(allowed, 2)
        print("fuzz gate: \(tried) inputs, \(allowed) allowed")

        let specs = [ParameterSpec("amount", .float(0...1), default: .float(0.5), ""),
                     ParameterSpec("scale", .float(-.infinity...(.infinity)), default: .float(0.5), ""),
                     ParameterSpec("taps", .int(0...8), default: .int(2), ""),
                     ParameterSpec("big", .int(Int.min...Int.max), default: .int(0), ""),
                     ParameterSpec("on", .bool, default: .bool(true), ""),
                     ParameterSpec("tint", .color, default: .color(SIMD4(1, 1, 1, 1)), ""),
                     ParameterSpec("at", .point, default: .point(SIMD2(0.5, 0.5)), ""),
                     ParameterSpec("mode", .choice(["a", "b"]), default: .choice("a"), "")]
        struct Body: Decodable { var name: String; var value: JSONValue }
        var accepted = 0
        let bodies = Fuzzer(corpus: FuzzCorpus.parameterBodies, dictionary: ["1e309", "[", "]", ",", "\"", "null", "-"])
            .run("param") { text in
                guard let body = try? JSONDecoder().decode(Body.self, from: Data(text.utf8)) else { return }
                for spec in specs {
                    do {
                        let value = try ParameterJSON.value(from: body.value, for: spec)
                        accepted += 1
                        if let number = value.doubleValue { XCTAssertTrue(number.isFinite, text) }
                        _ = ParameterJSON.json(value)
                    } catch {
                        assertOneLine(error, text)
                    }
                }
            }
        XCTAssertGreaterThan(accepted, 5)
        print("fuzz parameter bodies: \(bodies) inputs, \(accepted) accepted")
    }

    /// Raw request bytes at a real server (socket, libmicrohttpd, the gate, a router); afterwards it
    /// still answers a normal request.
    func testFuzzHTTPRequestRouting() throws {
        let server = try PreviewServerSecurityTests.CountingServer()
        let port = String(server.port)
        var fuzzer = Fuzzer(corpus: FuzzCorpus.requests.map { $0.replacingOccurrences(of: "PORT", with: port) },
                            dictionary: FuzzCorpus.requestDictionary.map { $0.replacingOccurrences(of: "PORT", with: port) })
        fuzzer.maxIterations = 400
        fuzzer.maxLength = 200_000
        var answered = 0
        let tried = fuzzer.run("http") { text in
            guard let fd = try? HTTPReply.connect(port: server.server.port, timeout: 2) else {
                XCTFail("the server stopped accepting")
                return
            }
            defer { close(fd) }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            shutdown(fd, Int32(SHUT_WR))
            var head = [UInt8](repeating: 0, count: 256)
            let n = recv(fd, &head, head.count, 0)
            if n > 12, String(decoding: head[0..<n], as: UTF8.self).hasPrefix("HTTP/1.") { answered += 1 }
        }
        let reply = try server.request(["GET /state HTTP/1.1", "Host: 127.0.0.1:\(port)"])
        XCTAssertEqual(reply.status, 200, "the server still works after \(tried) fuzzed requests")
        XCTAssertGreaterThan(answered, tried / 2)
        print("fuzz http: \(tried) requests, \(answered) answered")
    }

    /// `/mouse` bodies (ShaderToy's iMouse from the page): whatever is accepted is finite and inside the frame.
    func testFuzzMouseBodies() throws {
        let size = Size(width: 160, height: 90)
        var accepted = 0
        let tried = Fuzzer(corpus: [#"{"x":40,"y":60,"down":true}"#, #"{"x":0.5,"y":89.5,"down":false}"#, #"{"x":160,"y":0,"down":true}"#],
                           dictionary: ["1e309", "-", "NaN", "true", "null", "\"", ",", "{", "}", "[", "]", "1e-400", "\"x\":"]).run("mouse") { text in
            do {
                let event = try DevMouse.parse(Array(text.utf8), outputSize: size)
                accepted += 1
                XCTAssertTrue(event.x.isFinite && event.y.isFinite && (0...160).contains(event.x) && (0...90).contains(event.y), text)
            } catch {
                assertOneLine(error, text)
            }
        }
        XCTAssertGreaterThan(accepted, 2)
        print("fuzz mouse: \(tried) inputs, \(accepted) accepted")
    }
}

/// Shader includes and images from memory: the fuzzer never reads the disk.
struct MemoryFiles: ShaderFileSystem {
    func contents(ofFile path: String) throws -> String {
        if path.hasSuffix("x.glsl") { return "float helper() { return 1.0; }\n" }
        throw Prism.UsageError("\(path): no such file")
    }
}
