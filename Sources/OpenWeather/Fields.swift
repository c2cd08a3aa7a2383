import JSON

/// Why a decoded body is unusable, naming the JSON path (`list[0].main.aqi`).
struct FieldError: Error {
    let reason: String
}

/// Typed, range-checked access to one JSON object, naming the full path in errors.
struct Fields {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    /// Parses `body` and converts its root; every failure is a `decode` error.
    static func decode<T>(_ body: [UInt8], _ convert: (Fields) throws(FieldError) -> T) throws(OpenWeatherError) -> T {
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            throw .decode("the body is not valid JSON (\(error))")
        }
        do {
            return try convert(Fields(document, path: ""))
        } catch {
            throw .decode(error.reason)
        }
    }

    /// This value as an object; the root of a body that must be one.
    func requireObject() throws(FieldError) -> Fields {
        guard case .object = value else {
            throw FieldError(reason: "\(path.isEmpty ? "the body" : "`\(path)`") is \(value.typeName), not an object")
        }
        return self
    }

    /// The objects of this list value (the root of a body that is a JSON array).
    func elements() throws(FieldError) -> [Fields] {
        guard case .array(let elements) = value else {
            throw FieldError(reason: "\(path.isEmpty ? "the body" : "`\(path)`") is \(value.typeName), not a list")
        }
        var fields: [Fields] = []
        for (index, element) in elements.enumerated() {
            guard case .object = element else {
                throw FieldError(reason: "`\(path)[\(index)]` is \(element.typeName), not an object")
            }
            fields.append(Fields(element, path: "\(path)[\(index)]"))
        }
        return fields
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func present(_ key: String) -> JSONValue? {
        guard let found = value[key], found != .null else { return nil }
        return found
    }

    func object(_ key: String) throws(FieldError) -> Fields {
        guard let object = try optionalObject(key) else { throw FieldError(reason: "missing field `\(name(key))`") }
        return object
    }

    func optionalObject(_ key: String) throws(FieldError) -> Fields? {
        guard let found = present(key) else { return nil }
        guard case .object = found else {
            throw FieldError(reason: "`\(name(key))` is \(found.typeName), not an object")
        }
        return Fields(found, path: name(key))
    }

    func list(_ key: String) throws(FieldError) -> [Fields] {
        guard let found = present(key) else { throw FieldError(reason: "missing field `\(name(key))`") }
        return try Fields(found, path: name(key)).elements()
    }

    /// Nil when absent (One Call leaves out `alerts` when there are none).
    func optionalList(_ key: String) throws(FieldError) -> [Fields]? {
        guard present(key) != nil else { return nil }
        return try list(key)
    }

    func number(_ key: String, _ range: ClosedRange<Double>) throws(FieldError) -> Double {
        guard let number = try optionalNumber(key, range) else {
            throw FieldError(reason: "missing field `\(name(key))`")
        }
        return number
    }

    func optionalNumber(_ key: String, _ range: ClosedRange<Double>) throws(FieldError) -> Double? {
        guard let found = present(key) else { return nil }
        guard case .number(let number) = found else {
            throw FieldError(reason: "`\(name(key))` is \(found.typeName), not a number")
        }
        guard range.contains(number) else {
            throw FieldError(reason: "`\(name(key))` = \(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    func string(_ key: String) throws(FieldError) -> String {
        guard let text = try optionalString(key) else { throw FieldError(reason: "missing field `\(name(key))`") }
        return text
    }

    /// Every string read becomes a label value (city, condition, alert event and sender), so it is made
    /// one here: see `label`.
    func optionalString(_ key: String) throws(FieldError) -> String? {
        guard let found = present(key) else { return nil }
        guard case .string(let text) = found else {
            throw FieldError(reason: "`\(name(key))` is \(found.typeName), not a string")
        }
        return Self.label(text)
    }

    /// An upstream text that is read, not a label (an alert's description): control characters
    /// dropped as in `label`, but its line breaks kept (CR LF and CR as LF) and tabs, and no cut.
    static func text(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            defer { afterCR = scalar == "\r" }
            switch scalar {
            case "\n": if !afterCR { out.append("\n") }
            case "\r": out.append("\n")
            case "\t": out.append(scalar)
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// Bytes of an upstream string kept: a label names something, and each byte is repeated in every
    /// scrape and the state file.
    static let labelLimit = 256

    /// `text` without control characters (C0, DEL, C1: a NUL or an ESC from upstream has no business
    /// in a label or a log), tabs and line breaks as spaces, cut to `labelLimit` bytes at a character's
    /// UTF-8 boundary.
    static func label(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }
        if text.utf8.count <= labelLimit && !text.unicodeScalars.contains(where: isControl) { return text }
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let kept: Unicode.Scalar
            switch scalar {
            case "\t", "\n", "\r": kept = " "
            case _ where isControl(scalar): continue
            default: kept = scalar
            }
            bytes += kept.utf8.count
            guard bytes <= labelLimit else { break }
            out.append(kept)
        }
        return String(out)
    }
}
