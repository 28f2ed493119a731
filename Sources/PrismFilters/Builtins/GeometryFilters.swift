import PrismCore

/// Rotations, flips, crops and scaling.
enum GeometryFilters {
    static let definitions: [FilterDefinition] = []
}
