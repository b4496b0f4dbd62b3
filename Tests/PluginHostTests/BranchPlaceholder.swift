// The lead's tests for this target live on main; this file only lets the branch build on its own.
import Testing
