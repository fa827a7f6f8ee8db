package replayparquetexporter

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/reprise-dev/reprise/dataset"
)

// Where the dataset lives: a local folder (directory), optionally mirrored to a bucket
// (object_store), or a bucket named by directory itself with its local copy in
// local_directory. Both bucket forms end in the same mirror: publish locally, then upload whole.
//
// The URL form carries the settings of the object_store block in its query, with the names
// gocloud.dev's s3blob URLs use: s3://bucket/prefix?endpoint=http://host:9000&region=eu-west-1&use_path_style=true

// defaultLocalDirectory is the local copy of a dataset whose directory is an s3:// URL.
const defaultLocalDirectory = "./reprise-data"

// bucketQueryKeys are the query parameters an s3:// directory accepts.
var bucketQueryKeys = []string{"endpoint", "region", "use_path_style"}

// bucketDirectory reports whether directory names a bucket rather than a folder.
func (c *Config) bucketDirectory() bool {
	return dataset.IsS3URL(c.Directory)
}

// root is the local dataset root: directory, or local_directory with an s3:// directory.
func (c *Config) root() string {
	if !c.bucketDirectory() {
		return filepath.Clean(c.Directory)
	}
	if c.LocalDirectory != "" {
		return filepath.Clean(c.LocalDirectory)
	}
	return filepath.Clean(defaultLocalDirectory)
}

// objectStore is the bucket every published file is uploaded to, if any.
func (c *Config) objectStore() (dataset.ObjectStoreConfig, bool) {
	if c.bucketDirectory() {
		oc, _ := parseBucketDirectory(c.Directory) // Validate reports the errors
		return oc, true
	}
	if c.ObjectStore.HasValue() {
		return *c.ObjectStore.Get(), true
	}
	return dataset.ObjectStoreConfig{}, false
}

// parseBucketDirectory turns s3://bucket/prefix?endpoint=…&region=…&use_path_style=… into the
// object store settings, with every error found.
func parseBucketDirectory(raw string) (dataset.ObjectStoreConfig, []error) {
	u, err := url.Parse(raw)
	if err != nil {
		return dataset.ObjectStoreConfig{}, []error{err}
	}
	q := u.Query()
	oc := dataset.ObjectStoreConfig{Endpoint: q.Get("endpoint"), Region: q.Get("region")}
	u.RawQuery = ""
	oc.URL = u.String()
	var errs []error
	if v := q.Get("use_path_style"); v != "" {
		if oc.PathStyle, err = strconv.ParseBool(v); err != nil {
			errs = append(errs, fmt.Errorf("use_path_style=%q: want true or false", v))
		}
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(bucketQueryKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		errs = append(errs, fmt.Errorf("unknown query parameters %s (known: %s)", strings.Join(unknown, ", "), strings.Join(bucketQueryKeys, ", ")))
	}
	if err := oc.Validate(); err != nil {
		errs = append(errs, err)
	}
	return oc, errs
}

// validateLocation checks directory, local_directory and object_store together: each error
// names the field at fault.
func (c *Config) validateLocation() []error {
	var errs []error
	switch {
	case strings.TrimSpace(c.Directory) == "":
		errs = append(errs, errors.New("directory must not be empty"))
	case c.bucketDirectory():
		_, bad := parseBucketDirectory(c.Directory)
		for _, err := range bad {
			errs = append(errs, fmt.Errorf("directory: %w", err))
		}
		if c.ObjectStore.HasValue() {
			errs = append(errs, fmt.Errorf("directory (%s) is a bucket and object_store is set too: use one form (the URL takes endpoint, region and use_path_style as query parameters)", c.Directory))
		}
	case strings.Contains(c.Directory, "://"):
		errs = append(errs, fmt.Errorf("directory %q: want a local folder or s3://bucket/prefix", c.Directory))
	case c.LocalDirectory != "":
		errs = append(errs, fmt.Errorf("local_directory (%s) applies only to an s3:// directory; directory (%s) is already the local folder", c.LocalDirectory, c.Directory))
	}
	// The object_store block is not checked here: the collector validates it itself, prefixed
	// with its key, and a second check printed every mistake twice.
	return errs
}
