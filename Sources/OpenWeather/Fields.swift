import JSON

/// Why a decoded body is unusable, naming the JSON path (`list[0].main.aqi`).
struct FieldError: Error {
    let reason: String
}

/// Typed, range-checked access to one JSON object, naming the full path in errors.
///
/// Each decoder writes its endpoint's field policy beside it: the few fields a reading cannot exist
/// without are read with `number`, `object` and `list`, which throw; every other field with
/// `optional`, `part`, `optionalText` and `entries`, which never throw: what is absent, null, of
/// another type or out of range becomes nil (its series are left out, never replaced by a number)
/// and is noted in `gaps`, or the list entry it belongs to is skipped.
struct Fields {
    let value: JSONValue
    let path: String
    /// Where the gaps of the answer being decoded are noted; nil outside a decode (nothing noted).
    let log: GapLog?
    /// For an entry of a list, its place in the list as sent (entries skipped before it counted).
    let position: Int?

    init(_ value: JSONValue, path: String, log: GapLog? = nil, position: Int? = nil) {
        self.value = value
        self.path = path
        self.log = log
        self.position = position
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
            return try convert(Fields(document, path: "", log: GapLog()))
        } catch {
            throw .decode(error.reason)
        }
    }

    /// What the decode has noted so far: read at its end, into the reading.
    var gaps: AnswerGaps { log?.gaps ?? AnswerGaps() }

    // MARK: Optional fields: nil and noted, never thrown

    /// The number at `key`, or nil, noted as a gap, when it is absent, null, not a number or outside `range`.
    func optional(_ key: String, _ range: ClosedRange<Double>) -> Double? {
        guard let found = value[key], found != .null else {
            log?.missing(name(key), Self.absent)
            return nil
        }
        guard case .number(let number) = found else {
            log?.missing(name(key), "`\(name(key))` is \(found.typeName), not a number")
            return nil
        }
        guard range.contains(number) else {
            log?.missing(name(key), outside(key, number, range))
            return nil
        }
        return number
    }

    /// The number at `key` when it is one within `range`, else nil, not noted: a field that stands in
    /// for another (`main.sea_level` before `main.pressure`) or that no series is made of (`coord`).
    func peek(_ key: String, _ range: ClosedRange<Double>) -> Double? {
        guard case .number(let number)? = value[key], range.contains(number) else { return nil }
        return number
    }

    /// The object at `key`; absent, null or not an object, an empty one at its path, whose fields then
    /// read as absent (`wind` missing: `wind.speed`, `wind.deg` and `wind.gust` are noted).
    func part(_ key: String) -> Fields {
        if let found = value[key], case .object = found { return Fields(found, path: name(key), log: log) }
        return Fields(.object([]), path: name(key), log: log)
    }

    /// Whether `key` holds a value at all (not absent, not null): an object whose absence means
    /// something (`rain` left out when it does not rain).
    func has(_ key: String) -> Bool { present(key) != nil }

    /// A text that becomes a label (a name, a country, a condition's words): nil when absent, null or
    /// not a string, and not noted, since the label is then `""` as OpenWeather itself sends far from
    /// any city. Made a label as `optionalString` does.
    func optionalText(_ key: String) -> String? {
        guard case .string(let text)? = value[key] else { return nil }
        return Self.label(text)
    }

    /// The entries of the list at `key` that can be read, in order: one that is not an object, whose
    /// `decode` throws (a field it needs is unusable) or that `follows` refuses after the entry kept
    /// before it is skipped and noted, with what it had noted itself taken back. Nil, not noted, when
    /// the list is absent or null (a part left out: `exclude=`, no alerts); not a list, nil and noted.
    func entries<T>(
        _ key: String, follows: ((_ previous: T, _ entry: T, _ path: String) -> String?)? = nil,
        _ decode: (Fields) throws(FieldError) -> T
    ) -> [T]? {
        guard let found = present(key) else { return nil }
        guard case .array(let items) = found else {
            log?.missing(name(key), "`\(name(key))` is \(found.typeName), not a list")
            return nil
        }
        var kept: [T] = []
        for (index, item) in items.enumerated() {
            let path = "\(name(key))[\(index)]"
            guard case .object = item else {
                log?.skipped(name(key), "`\(path)` is \(item.typeName), not an object")
                continue
            }
            let mark = log?.mark
            do {
                let entry = try decode(Fields(item, path: path, log: log, position: index))
                if let previous = kept.last, let refusal = follows?(previous, entry, path) {
                    if let mark { log?.rollBack(to: mark) }
                    log?.skipped(name(key), refusal)
                    continue
                }
                kept.append(entry)
            } catch {
                if let mark { log?.rollBack(to: mark) }
                log?.skipped(name(key), error.reason)
            }
        }
        return kept
    }

    static let absent = "absent or null"

    // MARK: Required fields, and fields of our own documents: thrown

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
            fields.append(Fields(element, path: "\(path)[\(index)]", log: log))
        }
        return fields
    }

    /// Why `number` at `key` is refused: outside `range`, or too large for a number to hold (`1e999`
    /// parses as infinity).
    private func outside(_ key: String, _ number: Double, _ range: ClosedRange<Double>) -> String {
        let shown = number.isFinite ? "\(number)" : "a number too large to hold"
        return "`\(name(key))` = \(shown) is outside \(range.lowerBound)...\(range.upperBound)"
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

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
        return Fields(found, path: name(key), log: log)
    }

    func list(_ key: String) throws(FieldError) -> [Fields] {
        guard let found = present(key) else { throw FieldError(reason: "missing field `\(name(key))`") }
        return try Fields(found, path: name(key), log: log).elements()
    }

    /// Throws unless `key` holds a list, whose entries `entries` then reads.
    func requireList(_ key: String) throws(FieldError) {
        guard let found = present(key) else { throw FieldError(reason: "missing field `\(name(key))`") }
        guard case .array = found else { throw FieldError(reason: "`\(name(key))` is \(found.typeName), not a list") }
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
        guard range.contains(number) else { throw FieldError(reason: outside(key, number, range)) }
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
