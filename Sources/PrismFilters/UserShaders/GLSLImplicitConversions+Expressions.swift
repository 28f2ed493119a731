/// The expression half of the type pass: each expression's type, and the conversions its operands need.
extension GLSLImplicitConversions.Pass {
    typealias ValueType = GLSLImplicitConversions.ValueType
    typealias Operand = GLSLImplicitConversions.Operand

    mutating func expression(_ minimum: Int = 0) -> Operand {
        defer { nesting -= 1 }
        guard enter() else { return Operand(type: nil, first: 0, last: 0) }
        var left = unary()
        while let t = peek(), t.kind == .op, let p = GLSLImplicitConversions.precedence(t.text), p >= minimum {
            position += 1
            if t.text == "?" {
                let yes = expression(0)
                expect(":")
                let no = expression(1)
                left = Operand(type: unify(yes, no), first: left.first, last: no.last)
            } else if GLSLImplicitConversions.assignments.contains(t.text) {
                let right = expression(0)
                if t.text != "<<=", t.text != ">>=" { convert(right, toMatch: left.type) }
                left = Operand(type: left.type, first: left.first, last: right.last)
            } else {
                let right = expression(p + 1)
                left = binary(t.text, left, right)
            }
        }
        return left
    }

    /// The type both branches or operands take, converting an integer one beside a float (or uint) one.
    mutating func unify(_ a: Operand, _ b: Operand) -> ValueType? {
        guard let x = a.type, let y = b.type, x.isNumeric, y.isNumeric else { return a.type == b.type ? a.type : nil }
        if x.base == y.base { return ValueType(x.base, max(x.count, y.count)) }
        let base: ValueType.Base = (x.base == .float || y.base == .float) ? .float : .uint
        convert(a, toMatch: ValueType(base, x.count))
        convert(b, toMatch: ValueType(base, y.count))
        return ValueType(base, max(x.count, y.count))
    }

    mutating func binary(_ op: String, _ left: Operand, _ right: Operand) -> Operand {
        var result = Operand(type: nil, first: left.first, last: right.last)
        switch op {
        case "*", "/", "+", "-", "%":
            result.type = unify(left, right)
        case "<", ">", "<=", ">=", "==", "!=":
            _ = unify(left, right)
            result.type = ValueType(.bool, 1)
        case "&&", "||", "^^":
            result.type = ValueType(.bool, 1)
        default:
            result.type = left.type
        }
        return result
    }

    mutating func unary() -> Operand {
        defer { nesting -= 1 }
        guard enter(), let t = peek() else { return Operand(type: nil, first: max(position - 1, 0), last: max(position - 1, 0)) }
        if t.kind == .op, ["-", "+", "!", "~", "++", "--"].contains(t.text) {
            let start = position
            position += 1
            let operand = unary()
            return Operand(type: t.text == "!" ? ValueType(.bool, 1) : operand.type, first: start, last: operand.last,
                           isIntLiteral: operand.isIntLiteral && t.text == "-")
        }
        return postfix(primary())
    }

    mutating func primary() -> Operand {
        let start = position
        guard let t = peek() else { return Operand(type: nil, first: max(start - 1, 0), last: max(start - 1, 0)) }
        position += 1
        switch t.kind {
        case .number:
            let s = t.text.lowercased()
            if s.hasSuffix("u") { return Operand(type: ValueType(.uint, 1), first: start, last: start) }
            let isFloat = s.contains(".") || (!s.hasPrefix("0x") && s.contains("e")) || (!s.hasPrefix("0x") && s.hasSuffix("f"))
            // Decimal ints only: `.0` or `u` can be appended to them.
            return Operand(type: ValueType(isFloat ? .float : .int, 1), first: start, last: start,
                           isIntLiteral: !isFloat && s.allSatisfy(\.isNumber))
        case .op:
            if t.text == "(" {
                var inner = expression()
                while at(",") { position += 1; inner = expression() }
                expect(")")
                return Operand(type: inner.type, first: start, last: position - 1)
            }
            position -= 1  // not an expression: let the caller resynchronise
            return Operand(type: nil, first: start, last: start)
        case .word:
            if t.text == "true" || t.text == "false" { return Operand(type: ValueType(.bool, 1), first: start, last: start) }
            if at("[") , isTypeName(t.text) {  // float[3](…)
                skip(past: "]")
                if at("(") { _ = arguments() }
                return Operand(type: nil, first: start, last: position - 1)
            }
            if at("(") { return call(t.text, start: start) }
            let symbol = lookup(t.text)
            return Operand(type: symbol?.isArray == true ? nil : symbol?.type, first: start, last: start)
        }
    }

    mutating func postfix(_ base: Operand) -> Operand {
        var operand = base
        while let t = peek(), t.kind == .op {
            if t.text == "." {
                position += 1
                guard let field = peek(), field.kind == .word else { break }
                position += 1
                if field.text == "length", at("(") {
                    position += 1
                    expect(")")
                    operand = Operand(type: ValueType(.int, 1), first: operand.first, last: position - 1)
                    continue
                }
                var type: ValueType?
                if let b = operand.type, b.count > 1 || field.text.count == 1,
                   field.text.count <= 4, field.text.allSatisfy({ "xyzwrgbastpq".contains($0) }) {
                    type = ValueType(b.base, field.text.count)
                }
                operand = Operand(type: type, first: operand.first, last: position - 1)
            } else if t.text == "[" {
                let array = operand.first == operand.last ? lookup(tokens[operand.first].text) : nil
                position += 1
                _ = expression()
                expect("]")
                var type: ValueType?
                if let array, array.isArray { type = array.type } else if let b = operand.type, b.count > 1 { type = ValueType(b.base, 1) }
                operand = Operand(type: type, first: operand.first, last: position - 1)
            } else if t.text == "++" || t.text == "--" {
                position += 1
                operand = Operand(type: operand.type, first: operand.first, last: position - 1)
            } else {
                break
            }
        }
        return operand
    }

    /// `( a, b, … )` after a callee: the arguments.
    mutating func arguments() -> [Operand] {
        expect("(")
        var list: [Operand] = []
        if at("void"), at(")", 1) { position += 1 }
        while peek() != nil, !at(")") {
            let start = position
            list.append(expression())
            if at(",") { position += 1 } else if !at(")") { skip(past: ","); if position == start { position += 1 } }
        }
        expect(")")
        return list
    }

    mutating func call(_ name: String, start: Int) -> Operand {
        let args = arguments()
        let end = position - 1
        if let type = ValueType(name: name) { return Operand(type: type, first: start, last: end) }
        if isTypeName(name) { return Operand(type: nil, first: start, last: end) }
        if let overloads = functions[name] {
            let candidates = overloads.filter { $0.parameters.count == args.count }
            let exact = candidates.first { c in zip(c.parameters, args).allSatisfy { $0.type == $1.type } }
            if let exact { return Operand(type: exact.result, first: start, last: end) }
            guard candidates.count == 1, let signature = candidates.first else { return Operand(type: nil, first: start, last: end) }
            for (parameter, argument) in zip(signature.parameters, args) where !parameter.writes {
                if let p = parameter.type, let a = argument.type, p.count == a.count { convert(argument, toMatch: p) }
            }
            return Operand(type: signature.result, first: start, last: end)
        }
        return Operand(type: builtin(name, args), first: start, last: end)
    }

    /// The result of a built-in call, converting integer arguments of float built-ins.
    mutating func builtin(_ name: String, _ args: [Operand]) -> ValueType? {
        switch name {
        case "texture", "texture2D", "textureLod", "texelFetch", "textureProj", "textureGrad", "textureOffset", "texelFetchOffset":
            return ValueType(.float, 4)
        case "lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual", "equal", "notEqual":
            return args.first?.type.map { ValueType(.bool, $0.count) }
        case "any", "all": return ValueType(.bool, 1)
        default: break
        }
        guard GLSLImplicitConversions.floatBuiltins.contains(name), !args.isEmpty else { return nil }
        let types = args.compactMap(\.type)
        guard types.count == args.count, types.allSatisfy(\.isNumeric) else { return nil }
        let allIntegers = types.allSatisfy(\.isInteger)
        if allIntegers, GLSLImplicitConversions.integerToo.contains(name) {
            return types.allSatisfy({ $0.base == types[0].base }) ? ValueType(types[0].base, types.map(\.count).max()!) : nil
        }
        for (argument, type) in zip(args, types) where type.isInteger {
            convert(argument, from: type, to: .float)
        }
        let widest = types.map(\.count).max()!
        switch name {
        case "length", "distance", "dot": return ValueType(.float, 1)
        case "cross": return ValueType(.float, 3)
        case "step": return ValueType(.float, types[1].count)
        case "smoothstep": return ValueType(.float, types[2].count)
        default: return ValueType(.float, widest)
        }
    }
}
