import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismMedia
import PrismPipeline

extension LiveControl {
    /// `prism run`'s channel for `options` (nil without `--control` or `--watch`): replies on stdout, or on
    /// stderr when stdout carries the frames (`-o -`); snapshots never replace the input or the output.
    static func forRun(_ options: RunOptions, graph: FilterGraph, stop: StopSignal) -> LiveControl? {
        guard options.control.isEnabled else { return nil }
        var reads: [String] = []
        if case .movie(let path) = options.input { reads.append(path) }
        for extra in options.extraInputs { if case .movie(let path) = extra.spec.input { reads.append(path) } }
        var outputs: [(flag: String, path: String)] = []
        var directory = "."
        var rawOutput = false
        for output in options.outputs {
            switch output.spec {
            case .movie(let path) where path == "pipe:1" || path == "pipe:": rawOutput = true  // a movie on stdout
            case .movie(let path) where MovieDestination.scheme(of: path) != nil: break  // a URL or pipe: no folder
            case .movie(let path), .still(let path):
                outputs.append(("-o", path))
                let parent = (path as NSString).deletingLastPathComponent
                if outputs.count == 1, !parent.isEmpty { directory = parent }
            case .standardOutput: rawOutput = true
            case .discard, .virtualCamera: break
            }
        }
        return LiveControl(options: options.control, graphText: options.filter, userGraph: graph,
                           mode: .run(stop: stop, cameraInput: options.input.isCamera, reads: reads, outputs: outputs,
                                      snapshotDirectory: directory),
                           quiet: options.quiet, repliesOnStandardError: rawOutput, inputNames: options.inputNames)
    }

    /// `prism record`'s channel: always there (its stdin takes JSON commands beside the plain words);
    /// photos and takes go through the take controller, in order with the words.
    static func forRecord(_ options: RunOptions, graph: FilterGraph, remote: TakeController.Remote, stop: StopSignal,
                          directory: String) -> LiveControl {
        LiveControl(options: options.control, graphText: options.filter, userGraph: graph,
                    mode: .record(remote: remote, stop: stop, directory: directory, cameraInput: options.input.isCamera),
                    quiet: options.quiet, repliesOnStandardError: false, inputNames: options.inputNames)
    }
}

extension ControlOptions {
    /// `--control stdin` needs stdin for commands: not with raw frames coming in on it.
    func check(input: InputSpec) throws {
        if standardInput, case .standardInput = input {
            throw UsageError("--control stdin: stdin carries the raw input frames (INPUT -); use --control PORT")
        }
    }
}
