// The target is header-only; SwiftPM wants one source file.
