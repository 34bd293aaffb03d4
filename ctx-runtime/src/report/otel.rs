//! Feature `otel`: ctx's spans sent to an OpenTelemetry collector or tracing backend over
//! OTLP/HTTP (protobuf), for a program that wants ctx to set the exporter up.
//!
//! [`OtlpTracing`] builds the exporter, a tracer provider whose resource names the service, and
//! the `tracing-opentelemetry` layer to add to the program's subscriber. The spans' attributes are
//! the ones ctx writes (`gen_ai.*`, `ctx.budget.*`, see [`REQUEST_ATTRIBUTES`](super::REQUEST_ATTRIBUTES)):
//! nothing is mapped on the way. Spans are batched on the exporter's own thread; call
//! [`OtlpTracing::flush`] before a short program exits, or [`OtlpTracing::shutdown`].
//!
//! The exporter speaks plain HTTP (a collector on the same host or network, such as
//! `http://127.0.0.1:4318`, OTLP's default port); for TLS or gRPC, set up `opentelemetry-otlp`
//! yourself and add its layer instead: ctx's spans need nothing more.
//!
//! ```no_run
//! use ctx::report::OtlpTracing;
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::Layer as _;
//!
//! let otlp = OtlpTracing::http("http://127.0.0.1:4318", "my-service")?;
//! let subscriber = tracing_subscriber::registry()
//!     .with(otlp.layer().with_filter(tracing_subscriber::EnvFilter::new("ctx=info")));
//! tracing::subscriber::set_global_default(subscriber).expect("no subscriber yet");
//! // … run pipelines …
//! otlp.shutdown()?;
//! # Ok::<(), ctx::report::OtlpError>(())
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::registry::LookupSpan;

/// What can go wrong setting up or flushing the exporter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The exporter could not be built for the endpoint.
    #[error("cannot set up the OTLP exporter for {endpoint}: {reason}")]
    Build {
        /// The traces URL.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// Spans could not be flushed, or the provider shut down.
    #[error("the OTLP exporter failed: {0}")]
    Export(String),
}

/// An OTLP/HTTP exporter of ctx's spans and the layer that feeds it (see the module documentation).
#[derive(Debug)]
pub struct OtlpTracing {
    provider: SdkTracerProvider,
}

impl OtlpTracing {
    /// An exporter sending to the collector at `endpoint` (its base URL: `/v1/traces` is
    /// appended), with the resource's `service.name` set to `service_name`.
    pub fn http(endpoint: &str, service_name: &str) -> Result<Self, OtlpError> {
        let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
        let exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url.clone())
            .build()
            .map_err(|e| OtlpError::Build { endpoint: url, reason: e.to_string() })?;
        let resource = Resource::builder().with_service_name(service_name.to_owned()).build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        Ok(OtlpTracing { provider })
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans for this exporter.
    pub fn layer<S>(&self) -> OpenTelemetryLayer<S, SdkTracer>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer("ctx"))
    }

    /// Sends the spans ended so far and waits for the collector's answer.
    pub fn flush(&self) -> Result<(), OtlpError> {
        self.provider.force_flush().map_err(|e| OtlpError::Export(e.to_string()))
    }

    /// Flushes, then stops the exporter; spans ended later are dropped.
    pub fn shutdown(&self) -> Result<(), OtlpError> {
        self.provider.shutdown().map_err(|e| OtlpError::Export(e.to_string()))
    }
}
