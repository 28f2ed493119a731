import Foundation
import PrismCore
import PrismGPU

/// Which of one kernel's prepasses draw into a texture an earlier prepass drew (liveness reuse): a
/// `transient` prepass's target is free once the last prepass that reads it has run, and a later prepass
/// of the same size and format takes it instead of a texture of its own. A network of 200 layers holds as
/// many textures as its widest cut needs, not 200. Pure planning: what reads what comes from the prepasses'
/// text (`$passN`), so it is testable without a GPU.
enum TargetSharing {
    /// For each prepass, the earlier prepass whose target it draws into (the first owner of that texture), or
    /// nil for a texture of its own. `expression` is the kernel's expression (a transient prepass it reads
    /// stays alive to the end, like one that is not transient).
    static func plan(_ prepasses: [KernelPrepass], library: String, expression: String, sizes: [Size],
                     formats: [TextureFormat]) -> [Int?] {
        let count = prepasses.count
        var shared = [Int?](repeating: nil, count: count)
        guard count > 1, prepasses.contains(where: \.transient) else { return shared }
        // A library that names a target may be used by any pass: then nothing is shared.
        guard passesNamed(in: library).isEmpty else { return shared }
        let readByExpression = passesNamed(in: expression)
        let reads = prepasses.map { passesNamed(in: $0.main + ($0.vertex ?? "")) }
        func shareable(_ index: Int) -> Bool {
            let p = prepasses[index]
            return p.transient && !p.persistent && p.compute == nil && p.vertex == nil && !readByExpression.contains(index)
        }
        // The last prepass reading each one (itself when none does).
        var lastReader = Array(0..<count)
        for (reader, names) in reads.enumerated() {
            for index in names where index < count && index < reader { lastReader[index] = max(lastReader[index], reader) }
        }
        struct Key: Hashable { var size: Size; var format: TextureFormat }
        var free: [Key: [Int]] = [:]
        var alive: [(index: Int, owner: Int)] = []
        for index in 0..<count {
            // Textures whose last reader ran before this prepass are free for it.
            alive.removeAll { entry in
                guard lastReader[entry.index] < index else { return false }
                free[Key(size: sizes[entry.index], format: formats[entry.index]), default: []].append(entry.owner)
                return true
            }
            let p = prepasses[index]
            guard !p.persistent, p.compute == nil, p.vertex == nil else { continue }
            let key = Key(size: sizes[index], format: formats[index])
            var owner = index
            if let taken = free[key]?.popLast() {
                shared[index] = taken
                owner = taken
            }
            // A prepass that is not shareable keeps what it took to the end.
            if shareable(index) { alive.append((index, owner)) }
        }
        return shared
    }

    /// The N of every `$passN` in a text.
    static func passesNamed(in text: String) -> Set<Int> {
        var found: Set<Int> = []
        var rest = text[...]
        while let range = rest.range(of: "$pass") {
            let digits = rest[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
            if let n = Int(digits) { found.insert(n) }
            rest = rest[range.upperBound...]
        }
        return found
    }
}
