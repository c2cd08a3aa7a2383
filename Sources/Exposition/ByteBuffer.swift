/// A growable run of bytes written through a pointer: no copy-on-write or exclusivity checks,
/// and the small appends inline into the caller. For renderers that write hundreds of thousands
/// of short lines; everything else uses `[UInt8]`. Not thread-safe: one thread at a time.
public final class ByteBuffer {
    // Unchecked: a class's stored properties otherwise pay a dynamic exclusivity check on every
    // access, which was a tenth of the time spent rendering.
    @exclusivity(unchecked) @usableFromInline var used = 0
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    @exclusivity(unchecked) @usableFromInline var base: UnsafeMutablePointer<UInt8>

    public init(capacity: Int = 4096) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inlinable public var count: Int { used }

    /// The bytes written so far, valid until the next write.
    @inlinable public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: used) }

    /// Empties the buffer and keeps its capacity.
    @inlinable public func removeAll() { used = 0 }

    @inlinable public func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        let cursor = reserve(bytes.count)
        if bytes.count <= 16 {
            for index in 0..<bytes.count { cursor[index] = source[index] }
        } else {
            cursor.update(from: source, count: bytes.count)
        }
        used += bytes.count
    }

    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    @inlinable public func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// One series line from pre-rendered parts: `name`, `opening` (`{location="…"`, see
    /// `Exposition.appendOpeningLabel`), then `} value` and the newline, as `Exposition.appendSeries` writes it.
    @inlinable public func appendLine(
        name: UnsafeBufferPointer<UInt8>, opening: UnsafeBufferPointer<UInt8>, value: Double
    ) {
        append(name)
        append(opening)
        appendClosing(value)
    }

    /// `,name="value"`, the value escaped as `Exposition.appendLabel` does.
    public func appendLabel(_ name: StaticString, _ value: String) {
        append(",")
        append(name)
        append("=\"")
        var value = value
        value.withUTF8 { bytes in
            let written = Exposition.writeEscaped(bytes, quotes: true, into: reserve(bytes.count * 2))
            used += written
        }
        append("\"")
    }

    /// `,name="value"` for a number, formatted as `Exposition.appendValue` does.
    public func appendLabel(_ name: StaticString, _ value: Double) {
        append(",")
        append(name)
        append("=\"")
        appendValue(value)
        append("\"")
    }

    /// `} value` and the newline: the end of a series line.
    @inlinable public func appendClosing(_ value: Double) {
        let cursor = reserve(Exposition.valueScratch + 3)
        cursor[0] = UInt8(ascii: "}")
        cursor[1] = UInt8(ascii: " ")
        if let written = Exposition.writeValue(
            value, into: UnsafeMutableBufferPointer(start: cursor + 2, count: Exposition.valueScratch))
        {
            cursor[2 + written] = UInt8(ascii: "\n")
            used += written + 3
        } else {
            used += 2
            appendDescription(value)
            append("\n")
        }
    }

    public func appendValue(_ value: Double) {
        let cursor = reserve(Exposition.valueScratch)
        if let written = Exposition.writeValue(
            value, into: UnsafeMutableBufferPointer(start: cursor, count: Exposition.valueScratch))
        {
            used += written
        } else {
            appendDescription(value)
        }
    }

    @usableFromInline func appendDescription(_ value: Double) {
        var text = value.description
        text.withUTF8 { append($0) }
    }

    /// A pointer to `extra` writable bytes after the written ones; the caller advances `used`.
    @inlinable func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if used + extra > capacity { grow(to: used + extra) }
        return base + used
    }

    @usableFromInline func grow(to needed: Int) {
        let grown = max(capacity * 2, needed)
        let next = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        next.update(from: base, count: used)
        base.deallocate()
        base = next
        capacity = grown
    }
}
