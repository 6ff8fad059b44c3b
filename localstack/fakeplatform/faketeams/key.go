package faketeams

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"sync"
)

// TestKeyID is the kid of TestKey in the fake issuer's key set.
const TestKeyID = "parley-teams-test-key-1"

// testKeyPEM is the fake Bot Framework issuer's first signing key: a test
// key, fixed so that a process other than the fake (make post) signs
// activities the running fake's key set verifies. It authenticates nothing
// real.
const testKeyPEM = `-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAnadt78PJqT/hHyh04IoWATPe9grU/mW7UodCDa/1RCCBgVlQ
U+GBnXwncc2clp9LIBld7+YIDXItdD75QjyhzL+hh6wskSAoH97I44ywa9j8ywG4
EUUr8gLQjuV7p3oQGEt/2YO8u1sI6G8BStJBg9DWmardfVGzi957Y46vgfBEJUHU
V4BOLXR9qBIN4gbFLiFE9NCvw+0NsKV6WArNWNNoE4NxE1HbPBgzkb68FFy9hmVQ
Ka5/n6PGXk93vKezzrRBo98xHtqzy8FxYjXAiwfe1BpWdxKJyYN4yA+y0Onrx1jI
iK914OxMvsK4UOYmF+6ggzh3zAUioEzyqzuxtwIDAQABAoIBADGb4nG8s8Pw6Hek
BOc1PIhjWKkmrnBg9cmZ61SgRncKHYZk4uyKPP2f+E+MylXxSTQQF2mqgmUsxRXb
zRalOqrRsFQffySpsEabFa7Y8hj1vlJpN5EjqZjtftBAcSE5vT/P3irFlAmGs25k
o8z2DYybljPjuu+42l1MhJpG535k7JTl4EWahy203H5JztvkNDAj5391/gYnlEIz
OnF4/iP/NSFa9+TPNEWqF0CtaWn109/idOOBcDSiqfaUCugAXCVEJldyz+Vu9Mu4
RHlC5k/OHAScqfIaeVRKLoakEM5wJlixWXwNzH9RF76yMFrrkM8xmhzohBlRqOav
WkD5qrkCgYEA0h/2KQsj07IN3rGRO2WNcsMp24A+FWXJGS3UGUblMyhOIFETgnJ4
Q4OcFjzahlL6QILsTP2bzCA4gq9j9+3UgliaEA3BF/BkiBHWP8p3f79NqZGw30UN
cCEob2xVgljF50l9qjsh0lk4BzekEaof8oQ7egRTBOfm1K6a5DOZ4mkCgYEAwBLV
SmqY3GwxlMztHepHIfaTPQwbHacFAk+9/+2IccPCsfUSOYwcnngVqnvOXfiPbxU1
KY45OWcQqY19bYWn38DXUfW84gsXP0aIhYiIJ1OjkVp2C81Cb9E9YGFJl5oGM+OI
k/XifdKAWdB10zV1GbQoBVa5ZIsBAwR0oOHILx8CgYBpZcDKu5y/7hsI7haELZ8y
xnQzdvMtNn4VlChEeYw0Ce6ORTy8/QAYFWbwvJt8Lxj5zPIMeFVyoWLXInTJgtFK
hHjavptxj5JNsmy+WKdyO5oQCVUn2PIxoWAv665EkJTMO8+92KVRZpE1BZLVjXky
42MWBB9EYbImUmK9PqjcqQKBgHM3mOyv7wxidoeNOjv0ukDcWcyIA4gRFYcicJYi
VfPwe00m9ozAyLYi0NRYuh1Sqi/3Z9GKuDb/5VXgQzo8r8wgMMnAgFKUVpilZeW8
VfhJStg5jJBdy5mpyYiUM4IWadwchGRFXl0dtdKqotNUwO7vTAaP1FxEqhG2TYPo
jJ3/AoGBALF5r9qBdtzPDBlzUJn0US28xzJ2CRSDBrzuWfwFUAh9O4FE1ABFkze/
/0jqE7gUTzEEOOXa+5BZx0YA5b6BgPm0wsgrQgObVKnpTNV2T3GYIvoxVvqxxo0H
MBpv5joE7OZKEhIsFpFm5/MvbQh1ni/QcJhgQEdD58Va9ktgfDz6
-----END RSA PRIVATE KEY-----
`

// TestKey is the fake issuer's first signing key.
var TestKey = sync.OnceValue(func() *rsa.PrivateKey {
	b, _ := pem.Decode([]byte(testKeyPEM))
	if b == nil {
		panic("faketeams: the test key does not decode")
	}
	if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return k
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		panic("faketeams: the test key does not parse: " + err.Error())
	}
	return k.(*rsa.PrivateKey)
})
