# The rest of the Debian 13 (trixie) amd64 root that build.sh builds the arm64 release in, run inside
# it by debian_root after the packages build.sh lists (swiftlang, Debian's Swift 6.0.3, and the C
# libraries' headers): arm64's C libraries beside amd64's (multiarch), arm64's Swift runtime and
# modules from swiftlang:arm64 (it cannot be installed beside the amd64 one, so it is unpacked into
# /opt/swift-arm64), and the Swift SDK that puts them together for
#   swift build --swift-sdks-path /opt/swift-sdks --swift-sdk debian13-arm64
# The binary links them (and the Swift runtime statically) with Swift's lld.
dpkg --add-architecture arm64
apt-get update -qq
apt-get install -y -qq --no-install-recommends libc6-dev:arm64 libgcc-14-dev:arm64 libstdc++-14-dev:arm64 \
    libssl-dev:arm64 zlib1g-dev:arm64 libcrypt-dev:arm64
cd /tmp
apt-get download swiftlang:arm64 2>/dev/null
mkdir -p /opt/swift-arm64
dpkg-deb --fsys-tarfile swiftlang_*_arm64.deb |
    tar -x -C /opt/swift-arm64 ./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/swift_static ./usr/libexec/swift/lib/clang
rm swiftlang_*_arm64.deb
lib=/opt/swift-arm64/usr/libexec/swift/lib
test -f $lib/swift/linux/aarch64/swiftrt.o -a -f $lib/swift_static/linux/libswiftCore.a

sdk=/opt/swift-sdks/debian13-arm64.artifactbundle
mkdir -p $sdk/debian13-arm64
cat >$sdk/info.json <<'EOF'
{
  "schemaVersion": "1.0",
  "artifacts": {
    "debian13-arm64": {
      "type": "swiftSDK",
      "version": "6.0.3",
      "variants": [{ "path": "debian13-arm64", "supportedTriples": ["x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu"] }]
    }
  }
}
EOF
# The sysroot is this root: multiarch keeps arm64's headers and libraries in paths of their own. It is
# reached through links, since the compiler takes modules under the sysroot for the SDK's, and /src
# would be under "/"; SDKSettings.json spares a warning on every compile.
mkdir -p $sdk/debian13-arm64/sysroot
ln -s /usr $sdk/debian13-arm64/sysroot/usr
ln -s usr/lib $sdk/debian13-arm64/sysroot/lib
echo '{ "Version": "13.0", "CanonicalName": "debian13-arm64", "VersionMap": {} }' >$sdk/debian13-arm64/sysroot/SDKSettings.json
cat >$sdk/debian13-arm64/swift-sdk.json <<EOF
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "$lib/swift",
      "swiftStaticResourcesPath": "$lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
EOF
cat >$sdk/debian13-arm64/toolset.json <<'EOF'
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] }
}
EOF
