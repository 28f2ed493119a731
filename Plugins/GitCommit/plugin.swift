import PackagePlugin
import Foundation

/// Writes `GitCommit.swift` (`let gitCommit = "…"`) into the target before each build: the checkout's
/// commit, `-dirty` when tracked files differ from it, or "unknown" outside a git checkout (a source
/// tarball) or without git. The file is replaced only when its text changes, so builds stay incremental.
@main
struct GitCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("generated")
        let script = #"""
            set -u
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
              commit="$commit-dirty"
            fi
            mkdir -p "$2"
            printf '/// Written by Plugins/GitCommit before the build.\nlet gitCommit = "%s"\n' "$commit" > "$2/GitCommit.swift.new"
            if cmp -s "$2/GitCommit.swift.new" "$2/GitCommit.swift"; then rm "$2/GitCommit.swift.new"
            else mv "$2/GitCommit.swift.new" "$2/GitCommit.swift"; fi
            """#
        return [.prebuildCommand(displayName: "Reading the git commit",
                                 executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                                 outputFilesDirectory: output)]
    }
}
