package cdp

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/security"
)

// IgnoreCertificateErrors makes the browser behind conn load pages whose
// certificate is not valid, in every tab, for as long as conn is open
// (Security.setIgnoreCertificateErrors on the browser session). It works the
// same for a browser we launched and one we attached to.
func IgnoreCertificateErrors(ctx context.Context, conn *Conn) error {
	if err := conn.Browser().Call(ctx, security.CommandSetIgnoreCertificateErrors, &security.SetIgnoreCertificateErrorsParams{Ignore: true}, nil); err != nil {
		return fmt.Errorf("telling the browser to ignore certificate errors: %w", err)
	}
	return nil
}
